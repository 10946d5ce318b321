package io.engram.instances;

import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requirement;
import io.engram.access.Requires;
import io.engram.organizations.Instance;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.javalin.http.Context;
import java.util.Optional;

/**
 * The instance of a {@code /v1/nano/{nano_id}} route and the caller acting on it: the operator,
 * or an admin API key of the instance's organization. Another organization's instance, like one
 * that does not exist, is a 404 (after authentication, so nothing is told to a stranger).
 */
record InstanceAccess(Principal principal, Organization organization, Instance instance) {
  private static final String FOUND = "engram.instance";

  /** Whose instance the path names; the instance found is kept on the request for its route. */
  static Requires.Owner owner(InstanceStore instances) {
    return new Requires.Owner() {
      @Override
      public Optional<String> of(Context ctx) {
        Optional<Instance> found = instances.find(ctx.pathParam("nano_id"));
        found.ifPresent(instance -> ctx.attribute(FOUND, instance));
        return found.map(Instance::orgId);
      }

      @Override
      public ApiException notFound(Context ctx) {
        String id = ctx.pathParam("nano_id");
        return ApiException.notFound("instance_not_found", "nano_id", "No instance " + id);
      }
    };
  }

  /** The operator or an admin of the instance's organization. */
  static Requirement admin(InstanceStore instances) {
    return Requires.ownerAdmin(owner(instances));
  }

  /**
   * A file route, which the organization's signed-in users reach too (their path permissions are
   * checked by the route); the others are the operator's and admin keys' only.
   */
  static Requirement member(InstanceStore instances) {
    return Requires.ownerMember(owner(instances));
  }

  /** On a route that declared {@link #admin} or {@link #member}: who acts on which instance. */
  static InstanceAccess of(Context ctx) {
    Principal principal = Access.caller(ctx);
    Instance instance = ctx.attribute(FOUND);
    Organization org = principal.kind() == Principal.Kind.ACCOUNT
        ? Access.organization(ctx, instance.orgId())
        : principal.organization();
    return new InstanceAccess(principal, org, instance);
  }

  String orgId() {
    return organization.id();
  }

  String instanceId() {
    return instance.id();
  }
}
