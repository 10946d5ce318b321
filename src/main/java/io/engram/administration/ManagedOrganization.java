package io.engram.administration;

import io.engram.access.Guard;
import io.engram.access.Principal;
import io.engram.organizations.Organization;
import io.javalin.http.Context;

/**
 * The organization of a management route's path and the caller managing it: the operator, or an
 * admin API key of that organization (another organization's credential gets 404). An
 * organization's own key proves it exists; the operator's request is answered 404 for a missing
 * one before its body is looked at.
 */
public record ManagedOrganization(Principal principal, Organization organization) {

  public static ManagedOrganization of(
      Context ctx, Guard guard, OrganizationService organizations) {
    String orgId = ctx.pathParam("org_id");
    Principal principal = guard.organizationAdmin(ctx, orgId);
    Organization org = principal.kind() == Principal.Kind.ACCOUNT
        ? organizations.get(orgId)
        : principal.organization();
    return new ManagedOrganization(principal, org);
  }

  public String orgId() {
    return organization.id();
  }
}
