package io.engram.capabilities;

import io.engram.access.Permission;
import io.engram.access.Principal;

/**
 * Who may see and change which assistant, inside one organization (the store already keeps
 * organizations apart). Two separate checks, as the spec asks: access (reading) and the modify
 * permission (changing capabilities, deleting).
 *
 * <ul>
 *   <li>API keys with {@code admin} read, create and modify every assistant; other API keys of
 *       the organization read shared assistants only (a personal one is its owner's and the
 *       admins').</li>
 *   <li>Owners and admins, signed in, read and modify every assistant.</li>
 *   <li>Members read shared assistants and their own personal one, and modify only their own
 *       personal assistant. Another member's personal assistant does not exist for them (404).</li>
 * </ul>
 */
final class AssistantAccess {

  private AssistantAccess() {}

  static boolean canRead(Principal principal, Assistant assistant) {
    return managesOrganization(principal)
        || assistant.type() == AssistantType.ORG_SHARED
        || isOwner(principal, assistant);
  }

  static boolean canModify(Principal principal, Assistant assistant) {
    if (principal.kind() == Principal.Kind.API_KEY) {
      return principal.hasPermission(Permission.ADMIN);
    }
    return managesOrganization(principal)
        || (assistant.type() == AssistantType.EMPLOYEE_PERSONAL && isOwner(principal, assistant));
  }

  /** Admin API keys, owners and admins: they act for the whole organization. */
  static boolean managesOrganization(Principal principal) {
    return principal.managesOrganization();
  }

  /** Which assistants a caller's lists show: the same ones {@link #canRead} allows. */
  static AssistantStore.Visibility visibility(Principal principal) {
    if (managesOrganization(principal)) {
      return AssistantStore.Visibility.ALL;
    }
    return new AssistantStore.Visibility(
        false, principal.user() == null ? null : principal.user().id());
  }

  private static boolean isOwner(Principal principal, Assistant assistant) {
    return principal.user() != null && principal.user().id().equals(assistant.ownerUserId());
  }
}
