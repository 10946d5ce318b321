package io.engram.platform.ratelimit;

/**
 * The sliding-window counter, the arithmetic shared by the in-process limiter and the Redis script
 * (which does the same sums in Lua): requests are counted per calendar minute, and a request at
 * {@code elapsed} milliseconds into the current minute sees the previous minute's count weighted
 * by the part of it still inside the last 60 seconds: {@code previous * (60 s - elapsed) / 60 s +
 * current}. It passes when that estimate plus itself stays within the limit. Unlike fixed windows,
 * a client cannot spend a whole limit at the end of one minute and another at the start of the
 * next; unlike a log of every request, it keeps two numbers per key. Refused requests are not
 * counted, so a client that retries too early does not push its own retry further away.
 */
public final class SlidingWindow {
  public static final long WINDOW_MILLIS = 60_000;

  private SlidingWindow() {}

  /*
   * All sums are in requests x milliseconds, whole numbers, so that the Lua script (doubles, exact
   * for whole numbers below 2^53) and Java agree to the request: "previous * (W - elapsed) / W +
   * current + 1 <= limit" is "previous * (W - elapsed) + (current + 1) * W <= limit * W".
   */

  /** The previous minute's requests still counted at {@code elapsed} ms, times W. */
  private static long weightedTimesWindow(long previous, long elapsed) {
    return previous * (WINDOW_MILLIS - elapsed);
  }

  /**
   * The decision for a request at {@code nowMillis}, given the counts before it ({@code current}
   * not yet including it).
   */
  static RateLimitDecision decide(long previous, long current, long nowMillis, long limit) {
    long elapsed = Math.floorMod(nowMillis, WINDOW_MILLIS);
    long windowEnd = nowMillis - elapsed + WINDOW_MILLIS;
    long weighted = weightedTimesWindow(previous, elapsed);
    boolean allowed = weighted + (current + 1) * WINDOW_MILLIS <= limit * WINDOW_MILLIS;
    long counted = allowed ? current + 1 : current;
    long remaining = Math.max(
        0,
        Math.floorDiv(limit * WINDOW_MILLIS - weighted - counted * WINDOW_MILLIS, WINDOW_MILLIS));
    long retryAfterMillis = allowed ? 0 : retryAfterMillis(previous, current, elapsed, limit);
    return new RateLimitDecision(
        allowed,
        limit,
        remaining,
        Math.ceilDiv(windowEnd, 1000),
        Math.max(1, Math.ceilDiv(retryAfterMillis, 1000)));
  }

  /**
   * How long until one more request fits: within this minute, once enough of the previous one has
   * slid out; else into the next minute, once enough of this one has.
   */
  static long retryAfterMillis(long previous, long current, long elapsed, long limit) {
    if (current + 1 <= limit) {
      // previous * (W - elapsed - t) <= (limit - current - 1) * W
      long t =
          WINDOW_MILLIS - elapsed - Math.floorDiv((limit - current - 1) * WINDOW_MILLIS, previous);
      return Math.max(1, t);
    }
    // In the next minute this one is the previous: current * (W - x) <= (limit - 1) * W.
    long x = Math.ceilDiv((current - limit + 1) * WINDOW_MILLIS, current);
    return WINDOW_MILLIS - elapsed + x;
  }

  /** What the key has used as the limit sees it now (the estimate, rounded up). */
  static long used(long previous, long current, long elapsed) {
    return Math.ceilDiv(
        weightedTimesWindow(previous, elapsed) + current * WINDOW_MILLIS, WINDOW_MILLIS);
  }
}
