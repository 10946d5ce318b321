package io.engram.platform.ratelimit;

/**
 * Counts requests per key in fixed one-minute windows. The in-process implementation serves one
 * node; a Redis-backed one (same contract) shares the counts between nodes.
 */
public interface RateLimiter {

  /** Counts one request against {@code key} and says whether it fits in {@code limitPerMinute}. */
  RateLimitDecision acquire(String key, long limitPerMinute);

  /** How many requests {@code key} has counted in the current window, without counting one. */
  long used(String key);
}
