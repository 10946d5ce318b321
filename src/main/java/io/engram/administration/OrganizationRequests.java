package io.engram.administration;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.AgentSlug;
import io.engram.access.EndUserId;
import io.engram.access.KeyLevel;
import io.engram.access.Permission;
import io.engram.access.Scope;
import io.engram.organizations.Plan;
import io.engram.organizations.Role;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The management requests, parsed from a JSON body (an HTTP route's, or the one the admin CLI
 * builds from its flags): field names, types, lengths and allowed values. Rules that need the
 * stored state or the clock are {@link OrganizationService}'s.
 */
public final class OrganizationRequests {
  private static final Pattern EMAIL = Pattern.compile("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$");
  private static final int NAME_MAX = 200;

  /** {@code requestsPerMinute} is null for the plan's own /api budget. */
  public record NewOrganization(String name, Plan plan, Long requestsPerMinute) {}

  /** {@code password} is null for a user who cannot sign in yet. */
  public record NewUser(String email, String name, Role role, String password) {}

  /**
   * {@code agents} is null for a token that reaches every agent; {@code models} null for one that
   * may call every model its organization sees; {@code endUser} null for one not bound to one end
   * user of the organization's app.
   */
  public record NewToken(
      String name,
      Set<String> scopes,
      List<String> agents,
      Instant expiresAt,
      List<String> models,
      String endUser) {}

  /** {@code rateLimit} is null for RATE_LIMIT_REQUESTS; {@code models} as for a token. */
  public record NewApiKey(
      String name,
      Set<String> permissions,
      Integer rateLimit,
      Instant expiresAt,
      List<String> models) {}

  public record NewAccountKey(String name, Instant expiresAt) {}

  private OrganizationRequests() {}

  public static NewOrganization organization(JsonBody body) {
    body.allowOnly(Set.of("name", "plan", "requests_per_minute"));
    String name = body.requiredString("name", NAME_MAX);
    Plan plan = body.optionalString("plan", 32)
        .map(id -> Plan.fromId(id)
            .orElseThrow(() -> ApiException.badRequest(
                "plan", "Unknown plan '" + id + "'; plans: " + Plan.allIds())))
        .orElse(Plan.FREE);
    Long requestsPerMinute = body.optionalInt("requests_per_minute", 1, 1_000_000)
        .map(Integer::longValue)
        .orElse(null);
    return new NewOrganization(name, plan, requestsPerMinute);
  }

  /**
   * A change of an organization (a merge patch): a new name, a new plan, a contract-specific
   * budget, or {@code "requests_per_minute": null} to go back to the plan's. {@code budgetCleared}
   * tells "null" from "left out".
   */
  public record OrganizationChange(
      String name, Plan plan, Long requestsPerMinute, boolean budgetCleared) {}

  public static OrganizationChange organizationChange(ObjectNode patch) {
    boolean budgetCleared =
        patch.has("requests_per_minute") && patch.get("requests_per_minute").isNull();
    if (budgetCleared) {
      patch.remove("requests_per_minute");
    }
    JsonBody body = JsonBody.received(patch);
    body.allowOnly(Set.of("name", "plan", "requests_per_minute"));
    for (var field : patch.properties()) {
      if (field.getValue().isNull()) {
        throw ApiException.badRequest(
            field.getKey(), "'" + field.getKey() + "' must not be null; leave it out to keep it");
      }
    }
    String name = body.optionalString("name", NAME_MAX).orElse(null);
    Plan plan = body.optionalString("plan", 32)
        .map(id -> Plan.fromId(id)
            .orElseThrow(() -> ApiException.badRequest(
                "plan", "Unknown plan '" + id + "'; plans: " + Plan.allIds())))
        .orElse(null);
    Long requestsPerMinute = body.optionalInt("requests_per_minute", 1, 1_000_000)
        .map(Integer::longValue)
        .orElse(null);
    if (name == null && plan == null && requestsPerMinute == null && !budgetCleared) {
      throw ApiException.badRequest(
          null, "Nothing to change: send name, plan or requests_per_minute");
    }
    return new OrganizationChange(name, plan, requestsPerMinute, budgetCleared);
  }

  public static NewUser user(JsonBody body) {
    body.allowOnly(Set.of("email", "name", "role", "password"));
    String email = body.requiredString("email", 254).toLowerCase(Locale.ROOT);
    if (!EMAIL.matcher(email).matches()) {
      throw ApiException.badRequest("email", "'email' must be an email address");
    }
    String name = body.optionalString("name", NAME_MAX).orElse(email);
    Role role = body.optionalString("role", 16)
        .map(r -> Role.fromId(r)
            .orElseThrow(() ->
                ApiException.badRequest("role", "'role' must be one of owner, admin, member")))
        .orElse(Role.MEMBER);
    Optional<String> password = body.optionalString("password", 1024);
    if (password.isPresent() && password.get().length() < 12) {
      throw ApiException.badRequest("password", "'password' must be at least 12 characters");
    }
    return new NewUser(email, name, role, password.orElse(null));
  }

  /** A user's new role: {@code {"role": "owner" | "admin" | "member"}}. */
  public static Role roleChange(JsonBody body) {
    body.allowOnly(Set.of("role"));
    String role = body.requiredString("role", 16);
    return Role.fromId(role)
        .orElseThrow(
            () -> ApiException.badRequest("role", "'role' must be one of owner, admin, member"));
  }

  public static NewToken token(JsonBody body) {
    body.allowOnly(Set.of("name", "scopes", "agents", "expires_at", "models", "end_user_id"));
    String name = body.requiredString("name", NAME_MAX);
    Set<String> scopes = wireNames(
        body, "scopes", value -> Scope.fromWire(value).map(Scope::wireName), Scope.allWireNames());
    List<String> agents = body.optionalStringList("agents", 100, 64).orElse(null);
    if (agents != null) {
      if (agents.isEmpty()) {
        throw ApiException.badRequest(
            "agents", "'agents' must list at least one agent, or be omitted for all agents");
      }
      agents.stream().filter(a -> !AgentSlug.isValid(a)).findFirst().ifPresent(bad -> {
        throw ApiException.badRequest(
            "agents",
            "Agent slug '" + bad
                + "' must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit");
      });
      agents = List.copyOf(new LinkedHashSet<>(agents));
    }
    String endUser = body.optionalString("end_user_id", EndUserId.MAX).orElse(null);
    if (endUser != null) {
      EndUserId.check(endUser, "end_user_id");
    }
    return new NewToken(
        name,
        scopes,
        agents,
        body.optionalInstant("expires_at").orElse(null),
        models(body),
        endUser);
  }

  /**
   * {@code models}: the client-facing model ids the credential may call (chat and embedding
   * alike); left out, every model its organization sees.
   */
  private static List<String> models(JsonBody body) {
    List<String> models = body.optionalStringList("models", 100, 256).orElse(null);
    if (models != null && models.isEmpty()) {
      throw ApiException.badRequest(
          "models", "'models' must list at least one model, or be omitted for every model");
    }
    return models == null ? null : List.copyOf(new LinkedHashSet<>(models));
  }

  public static NewApiKey apiKey(JsonBody body) {
    body.allowOnly(Set.of("name", "permissions", "level", "rate_limit", "expires_at", "models"));
    String name = body.requiredString("name", NAME_MAX);
    Set<String> permissions = body.has("level")
        ? levelPermissions(body)
        : wireNames(
            body,
            "permissions",
            value -> Permission.fromWire(value).map(Permission::wireName),
            Permission.allWireNames());
    Integer rateLimit = body.optionalInt("rate_limit", 1, 1_000_000).orElse(null);
    return new NewApiKey(
        name,
        permissions,
        rateLimit,
        body.optionalInstant("expires_at").orElse(null),
        models(body));
  }

  public static NewAccountKey accountKey(JsonBody body) {
    body.allowOnly(Set.of("name", "expires_at"));
    String name = body.requiredString("name", NAME_MAX);
    return new NewAccountKey(name, body.optionalInstant("expires_at").orElse(null));
  }

  /** The dashboard's level instead of a permission list: one or the other, never both. */
  private static Set<String> levelPermissions(JsonBody body) {
    if (body.has("permissions")) {
      throw ApiException.badRequest(
          "level", "Send 'level' or 'permissions', not both: a level is a set of permissions");
    }
    String value = body.requiredString("level", 16);
    KeyLevel level = KeyLevel.fromWire(value)
        .orElseThrow(() -> ApiException.badRequest(
            "level",
            "'level' must be one of " + KeyLevel.allWireNames() + ", got '" + value + "'"));
    Set<String> permissions = new LinkedHashSet<>();
    level.permissions().forEach(p -> permissions.add(p.wireName()));
    return permissions;
  }

  private static Set<String> wireNames(
      JsonBody body, String field, Function<String, Optional<String>> parse, String allowed) {
    List<String> values = body.optionalStringList(field, 32, 64)
        .orElseThrow(() ->
            ApiException.badRequest(field, "'" + field + "' is required; allowed: " + allowed));
    if (values.isEmpty()) {
      throw ApiException.badRequest(
          field, "'" + field + "' must not be empty; allowed: " + allowed);
    }
    Set<String> parsed = new LinkedHashSet<>();
    for (String value : values) {
      parsed.add(parse
          .apply(value)
          .orElseThrow(() -> ApiException.badRequest(
              field, "Unknown value '" + value + "' in '" + field + "'; allowed: " + allowed)));
    }
    return parsed;
  }
}
