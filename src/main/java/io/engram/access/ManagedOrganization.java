package io.engram.access;

import io.engram.organizations.Organization;
import io.javalin.http.Context;

/**
 * The organization of a management route's path and the caller managing it, on a route that
 * declared {@code Requires.organizationAdmin()}: the operator, or an admin of that organization
 * (another organization's credential got 404 already). An organization's own key proves it
 * exists; the operator's request is answered 404 for a missing one before its body is looked at.
 */
public record ManagedOrganization(Principal principal, Organization organization) {

  public static ManagedOrganization of(Context ctx) {
    Principal principal = Access.caller(ctx);
    Organization org = principal.kind() == Principal.Kind.ACCOUNT
        ? Access.organization(ctx, ctx.pathParam("org_id"))
        : principal.organization();
    return new ManagedOrganization(principal, org);
  }

  public String orgId() {
    return organization.id();
  }
}
