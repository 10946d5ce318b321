package io.engram.platform.ratelimit;

import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;

/**
 * In-process fixed-window limiter: a counter per key per calendar minute. Fixed windows make the
 * contract exact (of N+k requests in one window, exactly N pass) and the reset time the same for
 * every client. Counters of past windows are dropped as new windows start.
 */
public final class FixedWindowRateLimiter implements RateLimiter {
  private static final long WINDOW_MILLIS = 60_000;

  private record Window(long index, long count) {}

  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();
  private final Clock clock;
  private volatile long lastSweptWindow = -1;

  public FixedWindowRateLimiter(Clock clock) {
    this.clock = clock;
  }

  @Override
  public RateLimitDecision acquire(String key, long limitPerMinute) {
    long nowMillis = clock.millis();
    long index = Math.floorDiv(nowMillis, WINDOW_MILLIS);
    sweepIfNewWindow(index);
    Window window = windows.compute(
        key,
        (k, current) -> current == null || current.index() != index
            ? new Window(index, 1)
            : new Window(index, current.count() + 1));
    long windowEndMillis = (index + 1) * WINDOW_MILLIS;
    long resetEpochSeconds = Math.ceilDiv(windowEndMillis, 1000);
    boolean allowed = window.count() <= limitPerMinute;
    long retryAfter = Math.max(1, Math.ceilDiv(windowEndMillis - nowMillis, 1000));
    return new RateLimitDecision(
        allowed,
        limitPerMinute,
        Math.max(0, limitPerMinute - window.count()),
        resetEpochSeconds,
        retryAfter);
  }

  @Override
  public long used(String key) {
    Window window = windows.get(key);
    long index = Math.floorDiv(clock.millis(), WINDOW_MILLIS);
    return window == null || window.index() != index ? 0 : window.count();
  }

  private void sweepIfNewWindow(long index) {
    if (index != lastSweptWindow) {
      lastSweptWindow = index;
      windows.values().removeIf(w -> w.index() < index);
    }
  }
}
