package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.javalin.http.Context;
import java.util.Optional;
import java.util.function.Function;

/** What the {@link AccessChain} left on a request for its route: the caller, and its slot. */
public final class Access {
  private Access() {}

  /**
   * The caller the chain let in. A route reads it only when it declared a {@link Requirement}; a
   * route that did not is a programming error, reported as such.
   */
  public static Principal caller(Context ctx) {
    Principal principal = ctx.attribute(AccessChain.PRINCIPAL);
    if (principal == null) {
      throw new IllegalStateException(
          ctx.method().name() + " " + ctx.path() + " reads its caller but declared no requirement");
    }
    return principal;
  }

  /**
   * The organization {@code orgId} names, found through the lookup the chain left on the
   * request, or the 404 every organization route answers for one that does not exist.
   */
  public static Organization organization(Context ctx, String orgId) {
    Function<String, Optional<Organization>> find = ctx.attribute(AccessChain.ORGANIZATIONS);
    if (find == null) {
      throw new IllegalStateException(ctx.path() + " looks an organization up outside the chain");
    }
    return find.apply(orgId).orElseThrow(() -> ApiException.notFound("Organization not found"));
  }

  /** The inference slot a route that runs a model was let in with (empty for the operator). */
  public static Optional<InferenceDoor.Pass> inferenceSlot(Context ctx) {
    return Optional.ofNullable(ctx.attribute(InferenceSlot.PASS));
  }
}
