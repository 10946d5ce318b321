package io.engram.access;

import io.engram.platform.http.ApiException;
import io.javalin.http.Context;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The requirements routes declare ({@code routes.get(path, Requires.scope(Scope.MEMORY_READ),
 * handler)}), each named for the access rule it is. The order of the checks inside each is the
 * contract: 404 (another organization's ids do not exist for you) before 403 (you may not do this
 * here).
 */
public final class Requires {
  private Requires() {}

  /** Nobody needs to authenticate: sign-in, health, the public assets. */
  public static Requirement anyone() {
    return new Requirement() {
      @Override
      public void check(Context ctx, Principal caller) {}

      @Override
      public boolean open() {
        return true;
      }
    };
  }

  /** The operator: an account-level key (or ENGRAM_ADMIN_KEY). */
  public static Requirement account() {
    return (ctx, caller) -> requireAccount(caller);
  }

  /** Operator read-outs such as /metrics: an account key, or anyone when API_KEY_REQUIRED=false. */
  public static Requirement operatorOrOpen() {
    return new Requirement() {
      @Override
      public void check(Context ctx, Principal caller) {
        requireAccount(caller);
      }

      @Override
      public boolean openWhenKeysNotRequired() {
        return true;
      }
    };
  }

  private static void requireAccount(Principal caller) {
    if (caller.kind() != Principal.Kind.ACCOUNT) {
      throw ApiException.forbidden(
          "insufficient_permissions", "This route needs an account-level key");
    }
  }

  /**
   * Managing the organization of the path's {@code org_id}: the operator, an API key of that
   * organization with {@code admin}, or a signed-in owner or admin of it. Another organization's
   * credential gets 404, as if the organization did not exist.
   */
  public static Requirement organizationAdmin() {
    return (ctx, caller) -> {
      if (caller.kind() == Principal.Kind.ACCOUNT) {
        return; // the operation itself answers 404 for a missing organization
      }
      if (!ctx.pathParam("org_id").equals(caller.orgId())) {
        throw organizationNotFound();
      }
      requireManager(caller);
    };
  }

  /**
   * Reading what the path's organization's owners and admins manage: as {@link
   * #organizationAdmin}, and also a signed-in member of it in any role.
   */
  public static Requirement organizationMember() {
    Requirement admin = organizationAdmin();
    return (ctx, caller) -> {
      if (caller.kind() == Principal.Kind.SESSION
          && ctx.pathParam("org_id").equals(caller.orgId())) {
        return;
      }
      admin.check(ctx, caller);
    };
  }

  /**
   * Managing one kind of thing of the path's organization: as {@link #organizationAdmin}, and
   * also an API key (or a signed-in person) of that organization with {@code permission}, such as
   * {@code models} for its models.
   */
  public static Requirement organizationPermission(Permission permission) {
    return (ctx, caller) -> {
      if (caller.kind() == Principal.Kind.ACCOUNT) {
        return;
      }
      if (!ctx.pathParam("org_id").equals(caller.orgId())) {
        throw organizationNotFound();
      }
      if (!caller.hasPermission(permission)) {
        requireManager(caller);
      }
    };
  }

  /** Finds who owns what a path names, such as an instance under {@code /v1/nano/{id}}. */
  public interface Owner {
    /** The owning organization's id; empty when there is no such thing. */
    Optional<String> of(Context ctx);

    /** The answer for what does not exist (and for what another organization owns). */
    ApiException notFound(Context ctx);
  }

  /**
   * Managing something an organization owns whose path does not name the organization: the
   * operator, or an API key of the owner with {@code admin} (or a signed-in owner or admin).
   */
  public static Requirement ownerAdmin(Owner owner) {
    return (ctx, caller) -> {
      requireOwner(ctx, caller, owner);
      if (caller.kind() != Principal.Kind.ACCOUNT) {
        requireManager(caller);
      }
    };
  }

  /**
   * The file API of something an organization owns: as {@link #ownerAdmin}, and also a signed-in
   * user of the owner (any role), whose path permissions the route checks.
   */
  public static Requirement ownerMember(Owner owner) {
    return (ctx, caller) -> {
      requireOwner(ctx, caller, owner);
      if (caller.kind() != Principal.Kind.ACCOUNT && caller.kind() != Principal.Kind.SESSION) {
        requireManager(caller);
      }
    };
  }

  private static void requireOwner(Context ctx, Principal caller, Owner owner) {
    Optional<String> orgId = owner.of(ctx);
    if (orgId.isEmpty()
        || caller.kind() != Principal.Kind.ACCOUNT && !orgId.get().equals(caller.orgId())) {
      throw owner.notFound(ctx);
    }
  }

  /** Memory and gateway routes: a context access token with the scope. */
  public static Requirement scope(Scope scope) {
    return anyScope(scope);
  }

  /**
   * A context access token with every one of the scopes: an import writes memories
   * ({@code memory:write}) and sets what only control may (states, reinforcements).
   */
  public static Requirement allScopes(Scope... scopes) {
    return (ctx, caller) -> {
      for (Scope scope : scopes) {
        scope(scope).check(ctx, caller);
      }
    };
  }

  /**
   * A context access token with any of the scopes: searching the organization's knowledge is
   * {@code memory:read} or the narrower {@code knowledge:read} (which reads nothing else).
   */
  public static Requirement anyScope(Scope... scopes) {
    return (ctx, caller) -> {
      for (Scope scope : scopes) {
        if (caller.hasScope(scope)) {
          return;
        }
      }
      if (caller.kind() == Principal.Kind.SESSION) {
        throw roleRefused(caller);
      }
      throw ApiException.forbidden(
          "insufficient_scope",
          "This route needs a context access token with the scope "
              + java.util.Arrays.stream(scopes)
                  .map(Scope::wireName)
                  .collect(java.util.stream.Collectors.joining(" or ")));
    };
  }

  /**
   * Reading the path's organization's figures (usage, analytics): as {@link #organizationAdmin},
   * and also a context access token of that organization with {@code insights:read} that is not
   * bound to agents (the figures span every agent).
   */
  public static Requirement organizationInsights() {
    Requirement admin = organizationAdmin();
    return (ctx, caller) -> {
      if (caller.kind() == Principal.Kind.CONTEXT_TOKEN && caller.hasScope(Scope.INSIGHTS_READ)) {
        if (!ctx.pathParam("org_id").equals(caller.orgId())) {
          throw organizationNotFound();
        }
        if (caller.agents() != null) {
          throw ApiException.forbidden(
              "agent_bound_token",
              "The organization's figures span every agent; a token bound to agents cannot read"
                  + " them");
        }
        if (caller.endUser() != null) {
          throw userBound("The organization's figures span every end user");
        }
        return;
      }
      admin.check(ctx, caller);
    };
  }

  /**
   * A context access token, whatever its scopes (the MCP server: each tool checks the scope it
   * needs, so a token sees the tools it may use).
   */
  public static Requirement contextToken() {
    return (ctx, caller) -> {
      if (caller.kind() != Principal.Kind.CONTEXT_TOKEN) {
        throw ApiException.forbidden(
            "insufficient_permissions", "This route needs a context access token");
      }
    };
  }

  /** Extended routes: an API key with the permission (or admin). */
  public static Requirement permission(Permission permission) {
    return (ctx, caller) -> requirePermission(caller, permission);
  }

  /** Extended routes: an API key with any of the permissions (or admin). */
  public static Requirement anyPermission(Permission... permissions) {
    return (ctx, caller) -> {
      for (Permission permission : permissions) {
        if (caller.hasPermission(permission)) {
          return;
        }
      }
      throw ApiException.forbidden(
          "insufficient_permissions",
          "This route needs an API key with the " + names(permissions) + " permission");
    };
  }

  /**
   * A context access token with the scope, or an API key with any of the permissions (admin grants
   * all). Used where both surfaces meet, such as model listing.
   */
  public static Requirement anyOf(Scope scope, Permission... permissions) {
    return (ctx, caller) -> requireAny(caller, scope, permissions);
  }

  /**
   * Inference on the current gateway and the extended surface alike: a context access token with
   * {@code inference:chat}, or an API key with {@code inference} (or admin).
   */
  public static Requirement inference() {
    return ofInference(anyOf(Scope.INFERENCE_CHAT, Permission.INFERENCE));
  }

  /**
   * {@code who}, on one of the gateway's inference routes ({@link Requirement#servesInference}:
   * the routes an open organization answers without a credential).
   */
  public static Requirement ofInference(Requirement who) {
    return new Marked(who, who.counting(), true);
  }

  /** A requirement with how it is counted and whether it serves inference said explicitly. */
  private record Marked(Requirement who, Counting counting, boolean servesInference)
      implements Requirement {
    @Override
    public void check(Context ctx, Principal caller) {
      who.check(ctx, caller);
    }
  }

  /**
   * A route that runs a model (chat, responses, an assistant's chat): as {@link #inference}, and
   * with the credential's rate window one of its organization's concurrency slots is taken, 429
   * when none is free; the route's admission takes it over ({@link Access#inferenceSlot}).
   */
  public static Requirement runsModel() {
    return slotted(inference());
  }

  private static Requirement slotted(Requirement who) {
    return new Marked(who, Requirement.Counting.INFERENCE_SLOT, who.servesInference());
  }

  /** Product routes under /api: a signed-in session, or an API key of the organization. */
  public static Requirement signedIn() {
    return (ctx, caller) -> {
      if (caller.kind() != Principal.Kind.SESSION && caller.kind() != Principal.Kind.API_KEY) {
        throw ApiException.forbidden(
            "insufficient_permissions",
            "This route needs a signed-in session or an API key of the organization");
      }
    };
  }

  private static ApiException userBound(String why) {
    return ApiException.forbidden(
        "user_bound_token", why + "; a token bound to one end user cannot use it");
  }

  /**
   * Organization-wide product routes that automation may call too (reflection): a signed-in
   * session, an API key of the organization, or a context access token with the scope that is not
   * bound to agents, since these routes span every agent's memory.
   */
  public static Requirement organizationWide(Scope scope) {
    return organizationWide(scope, scope);
  }

  /** As {@link #organizationWide(Scope)}, for a token with either scope. */
  public static Requirement organizationWide(Scope scope, Scope alternative) {
    return (ctx, caller) -> {
      switch (caller.kind()) {
        case SESSION, API_KEY -> {}
        case CONTEXT_TOKEN -> {
          if (!caller.hasScope(scope) && !caller.hasScope(alternative)) {
            throw ApiException.forbidden(
                "insufficient_scope",
                "This route needs a context access token with the scope " + scope.wireName());
          }
          if (caller.agents() != null) {
            throw ApiException.forbidden(
                "agent_bound_token",
                "This route spans every agent of the organization; a "
                    + "token bound to agents cannot use it");
          }
          if (caller.endUser() != null) {
            throw userBound("This route spans every end user of the organization");
          }
        }
        default ->
          throw ApiException.forbidden(
              "insufficient_permissions",
              "This route needs a signed-in session, an "
                  + "API key of the organization, or a context access token with the scope "
                  + scope.wireName());
      }
    };
  }

  /** The rule of {@link #inference}, for callers that are not HTTP requests (WebSockets). */
  static Principal requireAny(Principal principal, Scope scope, Permission... permissions) {
    boolean allowed = principal.hasScope(scope);
    for (Permission permission : permissions) {
      allowed |= principal.hasPermission(permission);
    }
    if (!allowed) {
      throw ApiException.forbidden(
          principal.kind() == Principal.Kind.CONTEXT_TOKEN
              ? "insufficient_scope"
              : "insufficient_permissions",
          "This route needs a context access token with the scope " + scope.wireName()
              + " or an API key with the " + names(permissions) + " permission");
    }
    return principal;
  }

  private static String names(Permission... permissions) {
    return Arrays.stream(permissions).map(Permission::wireName).collect(Collectors.joining(" or "));
  }

  private static void requirePermission(Principal principal, Permission permission) {
    if (principal.hasPermission(permission)) {
      return;
    }
    if (principal.kind() == Principal.Kind.SESSION) {
      throw roleRefused(principal);
    }
    throw ApiException.forbidden(
        "insufficient_permissions",
        "This route needs an API key with the " + permission.wireName() + " permission");
  }

  /** An admin API key, or a signed-in owner or admin (the console's settings pages). */
  private static void requireManager(Principal principal) {
    if (principal.managesOrganization()) {
      return;
    }
    if (principal.kind() == Principal.Kind.SESSION) {
      throw roleRefused(principal);
    }
    throw ApiException.forbidden(
        "insufficient_permissions", "This route needs an API key with the admin permission");
  }

  /** A signed-in member on a route for the organization's owners and admins. */
  private static ApiException roleRefused(Principal principal) {
    return ApiException.forbidden(
        "insufficient_role",
        "Your role (" + principal.user().role().id()
            + ") may not do this; an owner or admin of the organization can");
  }

  private static ApiException organizationNotFound() {
    return ApiException.notFound("Organization not found");
  }
}
