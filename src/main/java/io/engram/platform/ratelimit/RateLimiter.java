package io.engram.platform.ratelimit;

/**
 * Counts requests per key in a sliding one-minute window ({@link SlidingWindow}). The in-process
 * implementation serves one node; a Redis-backed one (same arithmetic) shares the counts between
 * nodes.
 */
public interface RateLimiter {

  /** Counts one request against {@code key} and says whether it fits in {@code limitPerMinute}. */
  RateLimitDecision acquire(String key, long limitPerMinute);

  /** What {@code key} has used as the limit sees it now (rounded up), without counting one. */
  long used(String key);
}
