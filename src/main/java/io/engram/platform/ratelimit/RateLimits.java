package io.engram.platform.ratelimit;

import io.engram.platform.cluster.Cluster;
import java.time.Clock;

/**
 * The node's request rate limiter and concurrency slots: counted in-process (one node, the embedded default), or in
 * Redis when {@code REDIS_URL} is set, so every node sharing it admits exactly the limit
 * together ({@link Cluster#registerMetrics} shows whether Redis answers).
 */
public final class RateLimits {
  private RateLimits() {}

  public static RateLimiter open(Cluster cluster, Clock clock) {
    SlidingWindowRateLimiter local = new SlidingWindowRateLimiter(clock);
    return cluster
        .redis()
        .<RateLimiter>map(redis -> new RedisRateLimiter(redis, local))
        .orElse(local);
  }

  /**
   * The key of a credential's request window. Its organization in braces is Redis Cluster's hash
   * tag: the window lives on the shard of the organization's slots, so one script at a model
   * route's door counts the request and takes the slot.
   */
  public static String credentialWindow(String orgId, String credentialId) {
    return orgId == null
        ? "credential:" + credentialId
        : "{" + orgId + "}:credential:" + credentialId;
  }

  /**
   * Concurrency slots: this node's count, or leases in Redis shared by every node (a node that
   * dies holding slots loses them within {@code lease}).
   */
  public static ConcurrencySlots slots(Cluster cluster, java.time.Duration lease) {
    ConcurrencySlots local = ConcurrencySlots.local();
    return cluster
        .redis()
        .<ConcurrencySlots>map(redis -> cluster.keep(new RedisSlots(redis, local, lease)))
        .orElse(local);
  }
}
