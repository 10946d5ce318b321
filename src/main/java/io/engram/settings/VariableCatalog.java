package io.engram.settings;

import io.engram.platform.config.EnvironmentVariables;
import io.engram.platform.config.VariableSpec;
import io.engram.platform.http.ApiException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which environment variables an organization may set for itself, and how they are checked. The
 * spec's variables with a per-organization meaning that Engram applies are settable and live; the
 * server's own (ports, paths, database, logging format, engines) are the operator's, set in the
 * process environment and read at start; those whose per-organization meaning comes with a
 * feature not built yet are refused rather than stored to do nothing. Any other name matching
 * {@code [A-Z_][A-Z0-9_]*} is a custom variable, kept as a string.
 */
public final class VariableCatalog {

  /** How far a variable reaches when an organization sets it. */
  public enum Reach {
    /** Applied to the organization's requests, at once. */
    ORGANIZATION,
    /** The server's: the operator sets it in the environment, and a restart applies it. */
    INSTANCE,
    /** The organization's own name: kept, shown, never interpreted. */
    CUSTOM
  }

  public static final int MAX_CUSTOM = 100;
  public static final int MAX_NAME = 64;
  public static final int MAX_VALUE = 4096;

  private static final Pattern NAME = Pattern.compile("[A-Z_][A-Z0-9_]*");
  private static final Pattern SECRET =
      Pattern.compile(".*(KEY|SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE).*");

  /** The variable that is also the configuration's {@code quotas.max_concurrent_requests}. */
  public static final String CONCURRENCY = "MAX_CONCURRENT_REQUESTS";

  static final Set<String> PER_ORGANIZATION = Set.of(
      "RATE_LIMIT_REQUESTS",
      "REQUEST_TIMEOUT",
      "MAX_CONCURRENT_REQUESTS",
      "LOG_LEVEL",
      "MAX_MODEL_SIZE_GB",
      "DEFAULT_MODEL",
      "CONVERSATION_HISTORY",
      "TRAINING_ENABLED",
      "CHECKPOINT_INTERVAL",
      "GRADIENT_ACCUMULATION_STEPS",
      "BATCH_SIZE",
      "WORKER_PROCESSES",
      "CORS_ORIGINS");

  /** An origin as browsers send it: scheme, host and an optional port, nothing after. */
  private static final Pattern ORIGIN =
      Pattern.compile("(?i)https?://[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?");

  private VariableCatalog() {}

  public static Reach reach(String name) {
    if (PER_ORGANIZATION.contains(name)) {
      return Reach.ORGANIZATION;
    }
    return EnvironmentVariables.spec(name).isPresent() || name.startsWith("ENGRAM_")
        ? Reach.INSTANCE
        : Reach.CUSTOM;
  }

  /** CORS_ORIGINS: {@code *} or origins such as {@code https://app.acme.com}, comma-separated. */
  private static void checkOrigins(String param, String value) {
    for (String origin : value.split(",")) {
      String entry = origin.strip();
      if (!entry.equals("*") && !ORIGIN.matcher(entry).matches()) {
        throw ApiException.badRequest(
            param,
            "CORS_ORIGINS takes * or origins such as https://app.example.com (scheme, host, "
                + "optional port; no path), comma-separated; '" + entry + "' is not one");
      }
    }
  }

  /**
   * True for a variable whose value is shown masked and stored sealed: one whose value is free
   * text (or not a known variable) and whose name says it holds a key, a token, a password. A
   * known variable whose value is a number, a boolean or one of a list holds no secret whatever its
   * name says ({@code API_KEY_REQUIRED} is {@code true} or {@code false}).
   */
  public static boolean looksSecret(String name) {
    Optional<VariableSpec> known = spec(name);
    if (known.isPresent()
        && known.get().type() != VariableSpec.Type.STRING
        && known.get().type() != VariableSpec.Type.PATH) {
      return false;
    }
    return SECRET.matcher(name).matches();
  }

  /**
   * The spec's variables (the table of its "Environment variables"), not Engram's own nor
   * OpenTelemetry's.
   */
  public static List<String> specNames() {
    List<String> names = new ArrayList<>();
    for (VariableSpec spec : EnvironmentVariables.all()) {
      if (!spec.name().startsWith("ENGRAM_")
          && !spec.name().startsWith("OTEL_")
          && !spec.name().equals("DATABASE_URL")) {
        names.add(spec.name());
      }
    }
    return names;
  }

  public static Optional<VariableSpec> spec(String name) {
    return EnvironmentVariables.spec(name);
  }

  /**
   * Checks that an organization may set {@code name} to {@code value}: a 400 naming the variable
   * (as {@code variables.NAME}) otherwise.
   */
  public static void checkSettable(String name, String value) {
    String param = "variables." + name;
    if (name.length() > MAX_NAME || !NAME.matcher(name).matches()) {
      throw ApiException.badRequest(
          param,
          "Variable names are upper-case letters, digits and underscores, not starting with a "
              + "digit, at most " + MAX_NAME + " characters");
    }
    switch (reach(name)) {
      case INSTANCE ->
        throw ApiException.invalid(
            "instance_variable",
            param,
            name + " is the server's: the operator sets it in the server's environment, and a "
                + "restart applies it");
      case ORGANIZATION -> {
        spec(name).flatMap(spec -> spec.check(value)).ifPresent(problem -> {
          throw ApiException.badRequest(param, problem);
        });
        if (name.equals("CORS_ORIGINS")) {
          checkOrigins(param, value);
        }
      }
      case CUSTOM -> {
        if (value.length() > MAX_VALUE) {
          throw ApiException.badRequest(
              param, name + " is longer than " + MAX_VALUE + " characters");
        }
      }
    }
  }
}
