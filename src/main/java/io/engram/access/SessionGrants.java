package io.engram.access;

import io.engram.organizations.Role;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a signed-in person may do on the memory routes, by role. Every role reads the
 * organization's memory, knowledge and insights; owners and admins also write, control
 * (reinforce, suppress, approve, reject) and delete it, and see the fine-tuning jobs. Chat and
 * action scopes are not granted:
 * a browser session is for managing the organization, not a way around its tokens.
 */
public final class SessionGrants {
  private static final Set<Scope> READ =
      EnumSet.of(Scope.MEMORY_READ, Scope.KNOWLEDGE_READ, Scope.INSIGHTS_READ);
  private static final Set<Scope> MANAGE = EnumSet.of(
      Scope.MEMORY_READ,
      Scope.MEMORY_WRITE,
      Scope.MEMORY_CONTROL,
      Scope.MEMORY_DELETE,
      Scope.KNOWLEDGE_READ,
      Scope.INSIGHTS_READ);

  private static final Set<Permission> MANAGER_PERMISSIONS = EnumSet.of(Permission.TRAINING);

  private SessionGrants() {}

  public static Set<Scope> scopes(Role role) {
    return role == Role.MEMBER ? READ : MANAGE;
  }

  /**
   * Key permissions a signed-in owner or admin has on the routes the console reaches: training
   * (the fine-tuning jobs page). Never inference: the session is not an inference credential.
   */
  public static Set<Permission> permissions(Role role) {
    return role == Role.MEMBER ? EnumSet.noneOf(Permission.class) : MANAGER_PERMISSIONS;
  }
}
