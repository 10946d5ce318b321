package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.organizations.Role;
import io.engram.organizations.User;
import java.util.List;
import java.util.Set;

/**
 * Who is calling, resolved from the request's credential: its kind, organization (null for the
 * operator), what it may do, (for tokens bound to agents) which agents it may reach, and (for a
 * token bound to one end user of the organization's app) that user: {@code endUser}, null when
 * the credential is not bound to one.
 */
public record Principal(
    Kind kind,
    String credentialId,
    Organization organization,
    Set<String> grants,
    List<String> agents,
    Integer rateLimit,
    User user,
    String csrfHash,
    List<String> models,
    String endUser) {

  /** A principal not bound to an end user. */
  public Principal(
      Kind kind,
      String credentialId,
      Organization organization,
      Set<String> grants,
      List<String> agents,
      Integer rateLimit,
      User user,
      String csrfHash,
      List<String> models) {
    this(kind, credentialId, organization, grants, agents, rateLimit, user, csrfHash, models, null);
  }

  /** A principal who may call every model its organization sees. */
  public Principal(
      Kind kind,
      String credentialId,
      Organization organization,
      Set<String> grants,
      List<String> agents,
      Integer rateLimit,
      User user,
      String csrfHash) {
    this(kind, credentialId, organization, grants, agents, rateLimit, user, csrfHash, null);
  }

  /** Whether the credential may call this model (one limited to a list of models names it). */
  public boolean mayUse(String modelId) {
    return models == null || models.contains(modelId);
  }

  public enum Kind {
    ACCOUNT,
    API_KEY,
    CONTEXT_TOKEN,
    SESSION,
    ANONYMOUS
  }

  public static final Principal ANONYMOUS =
      new Principal(Kind.ANONYMOUS, null, null, Set.of(), List.of(), null, null, null);

  public String orgId() {
    return organization == null ? null : organization.id();
  }

  /**
   * Context access tokens with the scope, and signed-in people whose role grants it ({@link
   * SessionGrants}: the console reads and manages memory through the same routes).
   */
  public boolean hasScope(Scope scope) {
    return switch (kind) {
      case CONTEXT_TOKEN -> grants.contains(scope.wireName());
      case SESSION -> user != null && SessionGrants.scopes(user.role()).contains(scope);
      default -> false;
    };
  }

  /**
   * API keys with the permission, or with {@code admin}, which grants every operation; signed-in
   * people as their role grants ({@link SessionGrants}).
   */
  public boolean hasPermission(Permission permission) {
    return switch (kind) {
      case API_KEY ->
        grants.contains(permission.wireName()) || grants.contains(Permission.ADMIN.wireName());
      case SESSION -> user != null && SessionGrants.permissions(user.role()).contains(permission);
      default -> false;
    };
  }

  /** Admin API keys, and signed-in owners and admins: they act for the whole organization. */
  public boolean managesOrganization() {
    if (kind == Kind.API_KEY) {
      return hasPermission(Permission.ADMIN);
    }
    return kind == Kind.SESSION
        && user != null
        && (user.role() == Role.OWNER || user.role() == Role.ADMIN);
  }

  /** True when the credential is not bound to agents or lists this one. */
  public boolean canReachAgent(String agentSlug) {
    return agents == null || agents.contains(agentSlug);
  }
}
