package io.engram.administration;

import io.engram.access.Credential;
import io.engram.access.CredentialKind;
import io.engram.access.CredentialService;
import io.engram.access.PasswordHasher;
import io.engram.access.Principal;
import io.engram.organizations.AuditEntry;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.organizations.Role;
import io.engram.organizations.Tier;
import io.engram.organizations.User;
import io.engram.organizations.UserStore;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Organizations, their users and their credentials, for a caller already authorized: the /v1
 * management routes and the {@code admin} CLI both hand it the request records that
 * {@link OrganizationRequests} parses, so both validate the same way. It answers domain objects;
 * {@link OrganizationViews} turns them into JSON.
 */
public final class OrganizationService {
  private static final Instant LATEST_EXPIRY = Instant.parse("9999-12-31T23:59:59Z");

  /**
   * What else must follow an organization's plan change, in the layers above this one (the
   * assistants' capabilities). Returns what it did, for the response, keyed by a name.
   */
  @FunctionalInterface
  public interface PlanChangeFollower {
    Map<String, Object> planChanged(Organization before, Organization after, String requestId);
  }

  /** An organization changed, and what followed from it. */
  public record Changed(Organization organization, Map<String, Object> consequences) {}

  /** One page of organizations and whether another follows. */
  public record Page(List<Organization> organizations, boolean hasMore) {}

  private final OrganizationStore organizations;
  private final UserStore users;
  private final CredentialService credentials;
  private final Clock clock;
  private final List<PlanChangeFollower> followers = new CopyOnWriteArrayList<>();

  public OrganizationService(
      OrganizationStore organizations,
      UserStore users,
      CredentialService credentials,
      Clock clock) {
    this.organizations = organizations;
    this.users = users;
    this.credentials = credentials;
    this.clock = clock;
  }

  public Organization create(OrganizationRequests.NewOrganization request) {
    Plan plan = request.plan();
    if (request.requestsPerMinute() != null && !plan.tier().atLeast(Tier.GROWTH)) {
      throw ApiException.badRequest(
          "requests_per_minute",
          "A contract-specific 'requests_per_minute' is for " + "Growth plans and above; plan "
              + plan.id() + " has " + plan.limits().requestsPerMinute());
    }
    Instant now = clock.instant();
    Organization org = new Organization(
        Ids.newId("org", now.toEpochMilli()),
        request.name(),
        plan,
        request.requestsPerMinute(),
        now,
        now);
    organizations.insert(org);
    return org;
  }

  public void onPlanChange(PlanChangeFollower follower) {
    followers.add(follower);
  }

  /**
   * Changes an organization's name, plan or contract budget, audited, with the consequences
   * applied at once: its credentials re-read the organization, its configuration is resolved
   * against the new plan (overrides above the new ceilings yield to it), a contract budget below
   * Growth is dropped, and the followers fit what they hold to the new plan.
   */
  public Changed change(
      String orgId,
      OrganizationRequests.OrganizationChange change,
      String credentialId,
      String requestId) {
    Organization before = get(orgId);
    Plan plan = change.plan() == null ? before.plan() : change.plan();
    Long budget = change.budgetCleared()
        ? null
        : change.requestsPerMinute() != null
            ? change.requestsPerMinute()
            : before.requestsPerMinute();
    Map<String, Object> consequences = new LinkedHashMap<>();
    if (budget != null && !plan.tier().atLeast(Tier.GROWTH)) {
      if (change.requestsPerMinute() != null) {
        throw ApiException.badRequest(
            "requests_per_minute",
            "A contract-specific 'requests_per_minute' is for Growth plans and above; plan "
                + plan.id() + " has " + plan.limits().requestsPerMinute());
      }
      consequences.put("requests_per_minute_dropped", budget);
      budget = null;
    }
    Instant now = clock.instant();
    Organization after = new Organization(
        orgId,
        change.name() == null ? before.name() : change.name(),
        plan,
        budget,
        before.createdAt(),
        now);
    organizations.update(
        after,
        new AuditEntry(
            Ids.newId("aud", now.toEpochMilli()),
            orgId,
            now,
            "organization.update",
            credentialId,
            requestId,
            Json.write(Map.of(
                "before", OrganizationViews.organization(before),
                "after", OrganizationViews.organization(after)))));
    credentials.organizationChanged(orgId);
    if (before.plan() != after.plan()) {
      for (PlanChangeFollower follower : followers) {
        consequences.putAll(follower.planChanged(before, after, requestId));
      }
    }
    return new Changed(after, consequences);
  }

  public Organization get(String orgId) {
    return organizations.get(orgId);
  }

  /** A page of organizations after the given id. */
  public Page list(String after, int limit) {
    List<Organization> page = organizations.list(after, limit + 1);
    return new Page(page.stream().limit(limit).toList(), page.size() > limit);
  }

  public User createUser(String orgId, OrganizationRequests.NewUser request) {
    get(orgId);
    Instant now = clock.instant();
    User user = new User(
        Ids.newId("user", now.toEpochMilli()),
        orgId,
        request.email(),
        request.name(),
        request.role(),
        now);
    String passwordHash =
        request.password() == null ? null : PasswordHasher.hash(request.password());
    if (!users.insert(user, passwordHash)) {
      throw ApiException.conflict(
          "user_exists", "The organization already has a user with this email");
    }
    return user;
  }

  /**
   * Gives a user another role; it takes effect on their next request (a session reads its user
   * each time). An organization always keeps an owner: the last one cannot be demoted (409).
   * Ownership is granted and taken away only by an owner or the operator: an admin, or an admin
   * API key (which an admin may create), would otherwise make itself owner or demote the owners.
   */
  public User changeRole(Principal caller, String orgId, String userId, Role role) {
    get(orgId);
    boolean mayChangeOwners = caller.kind() == Principal.Kind.ACCOUNT
        || (caller.kind() == Principal.Kind.SESSION && caller.user().role() == Role.OWNER);
    switch (users.changeRole(orgId, userId, role, mayChangeOwners)) {
      case NOT_FOUND ->
        throw ApiException.notFound(
            "user_not_found", "user_id", "No user '" + userId + "' in this organization");
      case LAST_OWNER ->
        throw ApiException.conflict(
            "last_owner",
            "role",
            "This is the organization's only owner; make someone else owner first");
      case OWNERS_ONLY ->
        throw ApiException.forbidden(
            "insufficient_role", "Only an owner may make someone owner or change an owner's role");
      case CHANGED -> {}
    }
    return users.find(orgId, userId).orElseThrow();
  }

  public List<User> users(String orgId) {
    get(orgId);
    return users.list(orgId);
  }

  public CredentialService.Issued createToken(
      String orgId, OrganizationRequests.NewToken request, String createdBy) {
    get(orgId);
    return credentials.issue(
        CredentialKind.CONTEXT_TOKEN,
        orgId,
        request.name(),
        new CredentialService.Grant(
            request.scopes(), request.agents(), null, request.models(), request.endUser()),
        future(request.expiresAt()),
        createdBy);
  }

  public CredentialService.Issued createApiKey(
      String orgId, OrganizationRequests.NewApiKey request, String createdBy) {
    get(orgId);
    // Without its own rate_limit, a key follows RATE_LIMIT_REQUESTS as in force for its
    // organization, live (null here), rather than the value of the day it was made.
    return credentials.issue(
        CredentialKind.API_KEY,
        orgId,
        request.name(),
        new CredentialService.Grant(
            request.permissions(), null, request.rateLimit(), request.models()),
        future(request.expiresAt()),
        createdBy);
  }

  public CredentialService.Issued createAccountKey(
      OrganizationRequests.NewAccountKey request, String createdBy) {
    return credentials.issue(
        CredentialKind.ACCOUNT_KEY,
        null,
        request.name(),
        new CredentialService.Grant(Set.of(), null, null),
        future(request.expiresAt()),
        createdBy);
  }

  /** Credentials of a kind; {@code orgId} is null for account keys. */
  public List<Credential> credentials(CredentialKind kind, String orgId) {
    if (orgId != null) {
      get(orgId);
    }
    return credentials.list(kind, orgId);
  }

  /** Revokes a credential; revoking twice answers the same record. Unknown ids are 404. */
  public Credential revoke(CredentialKind kind, String orgId, String id) {
    if (orgId != null) {
      get(orgId);
    }
    return credentials
        .revoke(kind, orgId, id)
        .orElseThrow(() -> ApiException.notFound(
            switch (kind) {
              case CONTEXT_TOKEN -> "Token not found";
              case API_KEY -> "API key not found";
              case ACCOUNT_KEY -> "Account key not found";
            }));
  }

  /** An expiry must lie ahead of now, and within what the views can print. */
  private Instant future(Instant expiresAt) {
    if (expiresAt == null) {
      return null;
    }
    if (!expiresAt.isAfter(clock.instant())) {
      throw ApiException.badRequest("expires_at", "'expires_at' must be in the future");
    }
    if (expiresAt.isAfter(LATEST_EXPIRY)) {
      throw ApiException.badRequest("expires_at", "'expires_at' must be before the year 10000");
    }
    return expiresAt;
  }
}
