package io.engram.access;

import io.engram.platform.http.RequestScoped;
import io.javalin.http.Context;

/**
 * The counting of a route that runs a model: the rate window and a concurrency slot at once,
 * through the gateway's {@link InferenceDoor}; the pass is kept on the request for the route's
 * admission and closed after the response.
 */
final class InferenceSlot {
  static final String PASS = "engram.inference.pass";

  private final RequestWindows windows;
  private volatile InferenceDoor door;

  InferenceSlot(RequestWindows windows) {
    this.windows = windows;
  }

  void bind(InferenceDoor door) {
    this.door = door;
  }

  void enter(Context ctx, Principal principal) {
    if (principal.organization() == null) {
      return;
    }
    InferenceDoor.Pass pass = door.enter(
        principal,
        RequestWindows.windowKey(principal),
        windows.limit(principal),
        decision -> windows.report(ctx, decision, false));
    RequestScoped.closeAfterResponse(ctx, pass);
    ctx.attribute(PASS, pass);
  }
}
