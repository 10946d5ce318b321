package io.engram.platform.http;

import io.javalin.http.Context;
import jakarta.servlet.ServletInputStream;
import java.io.IOException;

/**
 * What happens to a large request body a route refused before reading all of it (an upload from a
 * key without the permission, or one whose parts were wrong). If the server answered and closed
 * the connection with the client still sending, the client's TCP stack would get a reset and many
 * clients (Java's HttpClient among them) would report a broken connection instead of the error.
 * So the rest of the body is read and dropped, up to a bound; beyond it the connection is closed.
 * A client that sent {@code Expect: 100-continue} and was refused before any byte was read has
 * sent nothing and waits for the answer, so nothing is read.
 */
public final class RefusedBody {
  /** Enough for what a refused upload of a small model still has in flight; larger ones are cut. */
  static final long DISCARD_LIMIT_BYTES = 64L * 1024 * 1024;

  private RefusedBody() {}

  /**
   * @param started whether the route began reading the body (after which a 100-continue client sends
   *                it whole)
   */
  public static void discard(Context ctx, boolean started) {
    boolean waitingClient = "100-continue".equalsIgnoreCase(ctx.header("Expect"));
    if (!started && waitingClient) {
      return;
    }
    long declared = ctx.req().getContentLengthLong();
    if (!started && declared > DISCARD_LIMIT_BYTES) {
      ctx.header("Connection", "close");
      return;
    }
    drop(ctx, DISCARD_LIMIT_BYTES);
  }

  /**
   * After every route: whatever the route left unread of the body (a body sent where none is
   * read, or one refused before it was read) is read and dropped up to {@code limit}, so the
   * connection stays usable for the client's next request; past the limit the answer closes it
   * and says so. Without this, Jetty closed such a connection after answering without saying so,
   * and a client's next request on it met a closed socket. A 100-continue client was not asked for
   * its body and has not sent it: nothing is read.
   */
  public static void afterRoute(Context ctx, long limit) {
    boolean hasBody =
        ctx.req().getContentLengthLong() > 0 || ctx.header("Transfer-Encoding") != null;
    boolean closing = "close".equalsIgnoreCase(ctx.res().getHeader("Connection"));
    if (hasBody && !closing && !"100-continue".equalsIgnoreCase(ctx.header("Expect"))) {
      drop(ctx, limit);
    }
  }

  private static void drop(Context ctx, long limit) {
    try {
      ServletInputStream body = ctx.req().getInputStream();
      // The route read it all, as nearly every one does: nothing to drop, nothing to allocate.
      if (body.isFinished()) {
        return;
      }
      byte[] buffer = new byte[64 * 1024];
      long dropped = 0;
      int read;
      while ((read = body.read(buffer)) >= 0) {
        dropped += read;
        if (dropped > limit) {
          ctx.header("Connection", "close");
          return;
        }
      }
    } catch (IOException | IllegalStateException e) {
      // The client is gone or the body is unreadable: the connection closes with the answer.
      ctx.header("Connection", "close");
    }
  }
}
