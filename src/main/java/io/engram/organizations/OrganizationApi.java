package io.engram.organizations;

import io.engram.access.AgentSlug;
import io.engram.access.CredentialKind;
import io.engram.access.CredentialService;
import io.engram.access.PasswordHasher;
import io.engram.access.Permission;
import io.engram.access.Scope;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The organization management operations, shared by the /v1 routes and the {@code admin} CLI so
 * both validate the same way and answer the same JSON. Callers have already been authorized.
 */
public final class OrganizationApi {
  private static final Pattern EMAIL = Pattern.compile("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$");
  private static final int NAME_MAX = 200;
  private static final Instant LATEST_EXPIRY = Instant.parse("9999-12-31T23:59:59Z");

  private final OrganizationStore organizations;
  private final UserStore users;
  private final CredentialService credentials;
  private final Clock clock;
  private final int defaultKeyRateLimit;

  public OrganizationApi(OrganizationStore organizations, UserStore users, CredentialService credentials, Clock clock,
                         int defaultKeyRateLimit) {
    this.organizations = organizations;
    this.users = users;
    this.credentials = credentials;
    this.clock = clock;
    this.defaultKeyRateLimit = defaultKeyRateLimit;
  }

  public Map<String, Object> createOrganization(JsonBody body) {
    body.allowOnly(Set.of("name", "plan", "requests_per_minute"));
    String name = body.requiredString("name", NAME_MAX);
    Plan plan = body.optionalString("plan", 32)
        .map(id -> Plan.fromId(id).orElseThrow(() -> ApiException.badRequest("plan",
            "Unknown plan '" + id + "'; plans: " + Plan.allIds())))
        .orElse(Plan.FREE);
    Long requestsPerMinute = body.optionalInt("requests_per_minute", 1, 1_000_000).map(Integer::longValue).orElse(null);
    if (requestsPerMinute != null && !plan.tier().atLeast(Tier.GROWTH)) {
      throw ApiException.badRequest("requests_per_minute", "A contract-specific 'requests_per_minute' is for "
          + "Growth plans and above; plan " + plan.id() + " has " + plan.limits().requestsPerMinute());
    }
    Instant now = clock.instant();
    Organization org = new Organization(Ids.newId("org", now.toEpochMilli()), name, plan, requestsPerMinute, now,
        now);
    organizations.insert(org);
    return OrganizationViews.organization(org);
  }

  public Map<String, Object> getOrganization(String orgId) {
    return OrganizationViews.organization(requireOrganization(orgId));
  }

  /** A page of organizations after the given id; {@code has_more} says whether another page exists. */
  public Map<String, Object> listOrganizations(String after, int limit) {
    List<Organization> page = organizations.list(after, limit + 1);
    Map<String, Object> view = OrganizationViews.list(page.stream().limit(limit).map(OrganizationViews::organization).toList());
    view.put("has_more", page.size() > limit);
    return view;
  }

  public Map<String, Object> createUser(String orgId, JsonBody body) {
    requireOrganization(orgId);
    body.allowOnly(Set.of("email", "name", "role", "password"));
    String email = body.requiredString("email", 254).toLowerCase(Locale.ROOT);
    if (!EMAIL.matcher(email).matches()) {
      throw ApiException.badRequest("email", "'email' must be an email address");
    }
    String name = body.optionalString("name", NAME_MAX).orElse(email);
    Role role = body.optionalString("role", 16)
        .map(r -> Role.fromId(r).orElseThrow(() -> ApiException.badRequest("role",
            "'role' must be one of owner, admin, member")))
        .orElse(Role.MEMBER);
    Optional<String> password = body.optionalString("password", 1024);
    if (password.isPresent() && password.get().length() < 12) {
      throw ApiException.badRequest("password", "'password' must be at least 12 characters");
    }
    Instant now = clock.instant();
    User user = new User(Ids.newId("user", now.toEpochMilli()), orgId, email, name, role, now);
    if (!users.insert(user, password.map(PasswordHasher::hash).orElse(null))) {
      throw ApiException.conflict("user_exists", "The organization already has a user with this email");
    }
    return OrganizationViews.user(user);
  }

  public Map<String, Object> listUsers(String orgId) {
    requireOrganization(orgId);
    return OrganizationViews.list(users.list(orgId).stream().map(OrganizationViews::user).toList());
  }

  public Map<String, Object> createToken(String orgId, JsonBody body, String createdBy) {
    requireOrganization(orgId);
    body.allowOnly(Set.of("name", "scopes", "agents", "expires_at"));
    String name = body.requiredString("name", NAME_MAX);
    Set<String> scopes = wireNames(body, "scopes", value -> Scope.fromWire(value).map(Scope::wireName),
        Scope.allWireNames());
    List<String> agents = body.optionalStringList("agents", 100, 64).orElse(null);
    if (agents != null) {
      if (agents.isEmpty()) {
        throw ApiException.badRequest("agents", "'agents' must list at least one agent, or be omitted for all agents");
      }
      agents.stream().filter(a -> !AgentSlug.isValid(a)).findFirst().ifPresent(bad -> {
        throw ApiException.badRequest("agents", "Agent slug '" + bad
            + "' must be 1-64 characters of a-z, 0-9, '-' and '_', starting with a letter or digit");
      });
      agents = List.copyOf(new LinkedHashSet<>(agents));
    }
    Instant expiresAt = futureInstant(body);
    var issued = credentials.issue(CredentialKind.CONTEXT_TOKEN, orgId, name,
        new CredentialService.Grant(scopes, agents, null), expiresAt, createdBy);
    return OrganizationViews.credential(issued.credential(), issued.secret());
  }

  public Map<String, Object> createApiKey(String orgId, JsonBody body, String createdBy) {
    requireOrganization(orgId);
    body.allowOnly(Set.of("name", "permissions", "rate_limit", "expires_at"));
    String name = body.requiredString("name", NAME_MAX);
    Set<String> permissions = wireNames(body, "permissions",
        value -> Permission.fromWire(value).map(Permission::wireName), Permission.allWireNames());
    int rateLimit = body.optionalInt("rate_limit", 1, 1_000_000).orElse(defaultKeyRateLimit);
    Instant expiresAt = futureInstant(body);
    var issued = credentials.issue(CredentialKind.API_KEY, orgId, name,
        new CredentialService.Grant(permissions, null, rateLimit), expiresAt, createdBy);
    return OrganizationViews.credential(issued.credential(), issued.secret());
  }

  public Map<String, Object> createAccountKey(JsonBody body, String createdBy) {
    body.allowOnly(Set.of("name", "expires_at"));
    String name = body.requiredString("name", NAME_MAX);
    Instant expiresAt = futureInstant(body);
    var issued = credentials.issue(CredentialKind.ACCOUNT_KEY, null, name,
        new CredentialService.Grant(Set.of(), null, null), expiresAt, createdBy);
    return OrganizationViews.credential(issued.credential(), issued.secret());
  }

  /** Lists credentials of a kind; {@code orgId} is null for account keys. */
  public Map<String, Object> listCredentials(CredentialKind kind, String orgId) {
    if (orgId != null) {
      requireOrganization(orgId);
    }
    return OrganizationViews.list(credentials.list(kind, orgId).stream()
        .map(c -> OrganizationViews.credential(c, null)).toList());
  }

  /** Revokes a credential; revoking twice answers the same record. Unknown ids are 404. */
  public Map<String, Object> revokeCredential(CredentialKind kind, String orgId, String id) {
    if (orgId != null) {
      requireOrganization(orgId);
    }
    return credentials.revoke(kind, orgId, id)
        .map(c -> OrganizationViews.credential(c, null))
        .orElseThrow(() -> ApiException.notFound(switch (kind) {
          case CONTEXT_TOKEN -> "Token not found";
          case API_KEY -> "API key not found";
          case ACCOUNT_KEY -> "Account key not found";
        }));
  }

  private Organization requireOrganization(String orgId) {
    return organizations.find(orgId).orElseThrow(() -> ApiException.notFound("Organization not found"));
  }

  private static Set<String> wireNames(JsonBody body, String field, Function<String, Optional<String>> parse,
                                       String allowed) {
    List<String> values = body.optionalStringList(field, 32, 64)
        .orElseThrow(() -> ApiException.badRequest(field, "'" + field + "' is required; allowed: " + allowed));
    if (values.isEmpty()) {
      throw ApiException.badRequest(field, "'" + field + "' must not be empty; allowed: " + allowed);
    }
    Set<String> parsed = new LinkedHashSet<>();
    for (String value : values) {
      parsed.add(parse.apply(value).orElseThrow(() -> ApiException.badRequest(field,
          "Unknown value '" + value + "' in '" + field + "'; allowed: " + allowed)));
    }
    return parsed;
  }

  private Instant futureInstant(JsonBody body) {
    Optional<Instant> expiresAt = body.optionalInstant("expires_at");
    if (expiresAt.isPresent() && !expiresAt.get().isAfter(clock.instant())) {
      throw ApiException.badRequest("expires_at", "'expires_at' must be in the future");
    }
    if (expiresAt.isPresent() && expiresAt.get().isAfter(LATEST_EXPIRY)) {
      throw ApiException.badRequest("expires_at", "'expires_at' must be before the year 10000");
    }
    return expiresAt.orElse(null);
  }
}
