package io.engram.platform.http;

import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a request holds until its response is sent, such as a concurrency slot taken at the door:
 * closed by the server once the route has answered, whether it succeeded, failed or threw.
 */
public final class RequestScoped {
  private static final Logger LOG = LoggerFactory.getLogger(RequestScoped.class);
  private static final String HELD = "engram.request.held";

  private RequestScoped() {}

  /** Closes {@code held} once the route has answered. */
  public static void closeAfterResponse(Context ctx, AutoCloseable held) {
    List<AutoCloseable> all = ctx.attribute(HELD);
    if (all == null) {
      all = new ArrayList<>(1);
      ctx.attribute(HELD, all);
    }
    all.add(held);
  }

  static void close(Context ctx) {
    List<AutoCloseable> all = ctx.attribute(HELD);
    if (all == null) {
      return;
    }
    ctx.attribute(HELD, null);
    for (AutoCloseable held : all) {
      try {
        held.close();
      } catch (Exception e) {
        LOG.warn("could not release what {} {} held", ctx.method().name(), ctx.path(), e);
      }
    }
  }
}
