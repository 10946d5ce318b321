package io.engram.instances;

import io.engram.access.Guard;
import io.engram.access.Principal;
import io.engram.administration.OrganizationService;
import io.engram.organizations.Instance;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.javalin.http.Context;

/**
 * The instance of a {@code /v1/nano/{nano_id}} route and the caller acting on it: the operator,
 * or an admin API key of the instance's organization. Another organization's instance, like one
 * that does not exist, is a 404 (after authentication, so nothing is told to a stranger).
 */
record InstanceAccess(Principal principal, Organization organization, Instance instance) {

  static InstanceAccess of(
      Context ctx, Guard guard, OrganizationService organizations, InstanceStore instances) {
    return of(ctx, guard, organizations, instances, false);
  }

  /**
   * {@code files}: a file route, which the organization's signed-in users reach too (their path
   * permissions are checked by the route); the others are the operator's and admin keys' only.
   */
  static InstanceAccess of(
      Context ctx,
      Guard guard,
      OrganizationService organizations,
      InstanceStore instances,
      boolean files) {
    String id = ctx.pathParam("nano_id");
    Instance[] found = new Instance[1];
    java.util.function.Supplier<java.util.Optional<String>> owner =
        () -> instances.find(id).map(instance -> {
          found[0] = instance;
          return instance.orgId();
        });
    java.util.function.Supplier<ApiException> notFound =
        () -> ApiException.notFound("instance_not_found", "nano_id", "No instance " + id);
    Principal principal =
        files ? guard.ownerMember(ctx, owner, notFound) : guard.ownerAdmin(ctx, owner, notFound);
    Organization org = principal.kind() == Principal.Kind.ACCOUNT
        ? organizations.get(found[0].orgId())
        : principal.organization();
    return new InstanceAccess(principal, org, found[0]);
  }

  String orgId() {
    return organization.id();
  }

  String instanceId() {
    return instance.id();
  }
}
