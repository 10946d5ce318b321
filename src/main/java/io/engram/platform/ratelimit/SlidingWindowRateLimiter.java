package io.engram.platform.ratelimit;

import java.time.Clock;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The in-process sliding-window limiter ({@link SlidingWindow}): one node's counts. Counts of
 * minutes that can no longer matter are dropped as new minutes start.
 */
public final class SlidingWindowRateLimiter implements RateLimiter {

  /** A key's counts: the minute {@code index} and the one before it. */
  private record Counts(long index, long previous, long current) {
    Counts at(long now) {
      if (now == index) {
        return this;
      }
      return new Counts(now, now == index + 1 ? current : 0, 0);
    }
  }

  private final ConcurrentHashMap<String, Counts> counts = new ConcurrentHashMap<>();
  private final Clock clock;
  private volatile long lastSweptWindow = -1;

  public SlidingWindowRateLimiter(Clock clock) {
    this.clock = clock;
  }

  @Override
  public RateLimitDecision acquire(String key, long limitPerMinute) {
    long nowMillis = clock.millis();
    long index = Math.floorDiv(nowMillis, SlidingWindow.WINDOW_MILLIS);
    sweepIfNewWindow(index);
    RateLimitDecision[] decision = new RateLimitDecision[1];
    counts.compute(key, (k, before) -> {
      Counts now = before == null ? new Counts(index, 0, 0) : before.at(index);
      decision[0] = SlidingWindow.decide(now.previous(), now.current(), nowMillis, limitPerMinute);
      return decision[0].allowed() ? new Counts(index, now.previous(), now.current() + 1) : now;
    });
    return decision[0];
  }

  @Override
  public long used(String key) {
    long nowMillis = clock.millis();
    long index = Math.floorDiv(nowMillis, SlidingWindow.WINDOW_MILLIS);
    Counts known = counts.get(key);
    if (known == null) {
      return 0;
    }
    Counts now = known.at(index);
    return SlidingWindow.used(
        now.previous(), now.current(), Math.floorMod(nowMillis, SlidingWindow.WINDOW_MILLIS));
  }

  private void sweepIfNewWindow(long index) {
    if (index != lastSweptWindow) {
      lastSweptWindow = index;
      counts.values().removeIf(c -> c.index() < index - 1);
    }
  }
}
