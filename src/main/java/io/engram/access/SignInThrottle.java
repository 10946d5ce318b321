package io.engram.access;

import io.engram.platform.http.ApiException;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import io.javalin.http.Context;
import java.util.Collections;

/**
 * Refuses sign-in from an address that failed too often this minute. Only failures count, so a
 * busy office behind one address can still sign in. Failures are counted per client address, read
 * through ENGRAM_TRUSTED_PROXIES: behind a load balancer the socket's peer is the balancer, whose
 * address every client would share.
 */
final class SignInThrottle {
  private final RateLimiter windows;
  private final HttpMetrics metrics;
  private final NetworkBoundaryCheck boundary;
  private final long failuresPerMinute;

  SignInThrottle(
      RateLimiter windows,
      HttpMetrics metrics,
      NetworkBoundaryCheck boundary,
      long failuresPerMinute) {
    this.windows = windows;
    this.metrics = metrics;
    this.boundary = boundary;
    this.failuresPerMinute = failuresPerMinute;
  }

  void checkAllowed(Context ctx) {
    long failures = windows.used(key(ctx));
    if (failures >= failuresPerMinute) {
      metrics.rateLimitRejected("sign_in");
      RateLimitDecision window = windows.acquire(key(ctx), failuresPerMinute);
      throw ApiException.rateLimited(
          "Too many failed sign-in attempts; retry after " + window.retryAfterSeconds()
              + " seconds",
          window.retryAfterSeconds());
    }
  }

  void recordFailure(Context ctx) {
    windows.acquire(key(ctx), failuresPerMinute);
  }

  private String key(Context ctx) {
    return "sign-in:"
        + boundary.clientOf(
            ctx.req().getRemoteAddr(),
            () -> Collections.list(ctx.req().getHeaders("X-Forwarded-For")));
  }
}
