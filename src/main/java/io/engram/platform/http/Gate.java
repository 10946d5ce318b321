package io.engram.platform.http;

import io.javalin.http.Context;
import io.javalin.security.RouteRole;

/**
 * What a request passes before its route runs, given the requirement the route declared (the
 * access rules' chain). It runs inside the route's own handler, so a request is matched to its
 * route once (Javalin's before-matched stage would scan the route table a second time).
 */
@FunctionalInterface
public interface Gate {
  /** Throws the request's refusal, or lets it through. */
  void admit(Context ctx, RouteRole requirement);

  /** Before the access rules are installed nothing is let through: a missing chain fails closed. */
  Gate CLOSED = (ctx, requirement) -> {
    throw new IllegalStateException("no access rules are installed for " + ctx.path());
  };
}
