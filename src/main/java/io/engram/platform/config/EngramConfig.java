package io.engram.platform.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The service's start-up configuration, read once from the environment. Every value is checked
 * against {@link EnvironmentVariables}; all problems are reported together so an operator fixes
 * them in one pass.
 */
public record EngramConfig(
    int port,
    String host,
    boolean apiKeyRequired,
    String logLevel,
    String logFormat,
    String logDestination,
    Path logFilePath,
    List<String> corsOrigins,
    int rateLimitRequests,
    int requestTimeoutSeconds,
    OptionalInt maxConcurrentRequests,
    Path dataDir,
    Path modelCacheDir,
    String defaultModel,
    String databaseUrl,
    String adminKey,
    long maxBodyBytes,
    int sessionTtlMinutes,
    boolean cookieSecure,
    int shutdownGraceSeconds,
    Map<String, String> values) {

  /** Reads and validates the given environment (normally {@code System.getenv()}). */
  public static EngramConfig fromEnvironment(Map<String, String> env) {
    return parse(env, false);
  }

  private static EngramConfig parse(Map<String, String> env, boolean ephemeralPortAllowed) {
    List<String> problems = new ArrayList<>();
    Map<String, String> values = new LinkedHashMap<>();
    for (VariableSpec spec : EnvironmentVariables.all()) {
      String raw = env.get(spec.name());
      if (raw == null || raw.isBlank()) {
        values.put(spec.name(), spec.defaultValue());
        continue;
      }
      boolean ephemeralPort = ephemeralPortAllowed && spec.name().equals("API_PORT") && raw.trim().equals("0");
      spec.check(raw).filter(problem -> !ephemeralPort)
          .ifPresentOrElse(problems::add, () -> values.put(spec.name(), raw.trim()));
    }
    String adminKey = values.get("ENGRAM_ADMIN_KEY");
    if (!adminKey.isEmpty() && (adminKey.length() < 24 || adminKey.chars().anyMatch(Character::isWhitespace))) {
      problems.add("ENGRAM_ADMIN_KEY must be at least 24 characters without spaces");
    }
    String databaseUrl = values.get("DATABASE_URL");
    if (!databaseUrl.isEmpty() && !isPostgresUrl(databaseUrl)) {
      problems.add("DATABASE_URL must be empty (SQLite in ENGRAM_DATA_DIR) or a PostgreSQL URL "
          + "(postgresql://user:password@host:5432/db or jdbc:postgresql://...)");
    }
    String upstream = values.get("ENGRAM_UPSTREAM_URL");
    if (!upstream.isEmpty() && !isHttpUrl(upstream)) {
      problems.add("ENGRAM_UPSTREAM_URL must be an http:// or https:// base URL including /v1, got '" + upstream + "'");
    }
    if (values.get("ENGRAM_UPSTREAM_API_KEY").chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      // It goes into a header line; a line break inside it would break every upstream call.
      problems.add("ENGRAM_UPSTREAM_API_KEY must not contain control characters such as a line break");
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    Path dataDir = Path.of(values.get("ENGRAM_DATA_DIR"));
    String modelDir = values.get("MODEL_CACHE_DIR");
    String maxConcurrent = values.get("MAX_CONCURRENT_REQUESTS");
    return new EngramConfig(
        Integer.parseInt(values.get("API_PORT")),
        values.get("API_HOST"),
        bool(values.get("API_KEY_REQUIRED")),
        values.get("LOG_LEVEL").toLowerCase(Locale.ROOT),
        values.get("LOG_FORMAT").toLowerCase(Locale.ROOT),
        values.get("LOG_DESTINATION").toLowerCase(Locale.ROOT),
        Path.of(values.get("LOG_FILE_PATH")),
        Arrays.stream(values.get("CORS_ORIGINS").split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList(),
        Integer.parseInt(values.get("RATE_LIMIT_REQUESTS")),
        Integer.parseInt(values.get("REQUEST_TIMEOUT")),
        maxConcurrent.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(maxConcurrent)),
        dataDir,
        modelDir.isEmpty() ? dataDir.resolve("models") : Path.of(modelDir),
        values.get("DEFAULT_MODEL"),
        databaseUrl,
        adminKey,
        Long.parseLong(values.get("ENGRAM_MAX_BODY_BYTES")),
        Integer.parseInt(values.get("ENGRAM_SESSION_TTL_MINUTES")),
        bool(values.get("ENGRAM_COOKIE_SECURE")),
        Integer.parseInt(values.get("ENGRAM_SHUTDOWN_GRACE_SECONDS")),
        Map.copyOf(values));
  }

  private static boolean bool(String value) {
    return VariableSpec.parseBoolean(value).orElseThrow();
  }

  private static boolean isHttpUrl(String url) {
    try {
      URI uri = new URI(url);
      return (uri.getScheme() != null && (uri.getScheme().equals("http") || uri.getScheme().equals("https")))
          && uri.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  /** The upstream generation server, when one is configured. */
  public Optional<Upstream> upstream() {
    String url = values.get("ENGRAM_UPSTREAM_URL");
    if (url.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Upstream(URI.create(url), values.get("ENGRAM_UPSTREAM_API_KEY"),
        values.get("ENGRAM_UPSTREAM_MODEL"), Integer.parseInt(values.get("ENGRAM_UPSTREAM_CONTEXT_LENGTH"))));
  }

  /** An OpenAI-compatible server: base URL (with /v1), its key, the model name it knows, its context. */
  public record Upstream(URI baseUrl, String apiKey, String model, int contextLength) {
    @Override
    public String toString() {
      return "Upstream[" + baseUrl + ", model=" + model + "]";
    }
  }

  /** The WebSocket endpoints' settings (the spec's websocket.enabled, max_connections, idle_timeout). */
  public record WebSocketSettings(boolean enabled, int maxConnections, Duration idleTimeout, Duration authTimeout) {
  }

  public WebSocketSettings webSockets() {
    return new WebSocketSettings(bool(values.get("ENGRAM_WEBSOCKET_ENABLED")),
        Integer.parseInt(values.get("ENGRAM_WEBSOCKET_MAX_CONNECTIONS")),
        Duration.ofSeconds(Long.parseLong(values.get("ENGRAM_WEBSOCKET_IDLE_TIMEOUT"))),
        Duration.ofSeconds(Long.parseLong(values.get("ENGRAM_WEBSOCKET_AUTH_TIMEOUT"))));
  }

  /** WORKER_PROCESSES: generations at once per local model; empty: decided by the runtime. */
  public OptionalInt workerProcesses() {
    String value = values.get("WORKER_PROCESSES");
    return value.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(value));
  }

  /** MAX_MODEL_SIZE_GB: the largest model upload; empty: the organization's plan storage decides. */
  public OptionalInt maxModelSizeGb() {
    String value = values.get("MAX_MODEL_SIZE_GB");
    return value.isEmpty() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(value));
  }

  public int streamKeepAliveSeconds() {
    return Integer.parseInt(values.get("ENGRAM_STREAM_KEEPALIVE_SECONDS"));
  }

  private static boolean isPostgresUrl(String url) {
    return url.startsWith("postgresql://") || url.startsWith("postgres://") || url.startsWith("jdbc:postgresql://");
  }

  /** Whether this node starts scheduled reflection runs (tests turn it off and drive the schedule themselves). */
  public boolean reflectionScheduler() {
    return bool(values.get("ENGRAM_REFLECTION_SCHEDULER"));
  }

  public boolean usesPostgres() {
    return !databaseUrl.isEmpty();
  }

  /**
   * The same configuration with some variables replaced (programmatic overrides, validated like
   * the environment). {@code API_PORT=0}, an ephemeral port, is accepted here for tests and tools.
   */
  public EngramConfig withOverrides(Map<String, String> overrides) {
    Map<String, String> merged = new LinkedHashMap<>(values);
    merged.putAll(overrides);
    return parse(merged, true);
  }

  /** The values safe to print at start-up: secrets and database passwords are masked. */
  public Map<String, String> redactedValues() {
    Map<String, String> shown = new LinkedHashMap<>();
    values.forEach((name, value) -> {
      if (name.equals("ENGRAM_ADMIN_KEY") || name.equals("ENGRAM_UPSTREAM_API_KEY")) {
        shown.put(name, value.isEmpty() ? "" : "<set>");
      } else if (name.equals("DATABASE_URL")) {
        shown.put(name, value.replaceAll("(//[^:/@]+:)[^@]*@", "$1***@").replaceAll("(?i)(password=)[^&]*", "$1***"));
      } else {
        shown.put(name, value);
      }
    });
    return shown;
  }
}
