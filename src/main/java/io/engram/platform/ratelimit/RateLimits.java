package io.engram.platform.ratelimit;

import io.engram.platform.cluster.Cluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;

/**
 * The node's request rate limiter and concurrency slots: counted in-process (one node, the embedded default), or in
 * Redis when {@code REDIS_URL} is set, so every node sharing it admits exactly the limit
 * together. {@code engram_redis_available} shows whether Redis answers (1) or the node counts on
 * its own for now (0).
 */
public final class RateLimits {
  private RateLimits() {}

  public static RateLimiter open(Cluster cluster, Clock clock, MeterRegistry registry) {
    SlidingWindowRateLimiter local = new SlidingWindowRateLimiter(clock);
    if (cluster.redis().isEmpty()) {
      return local;
    }
    cluster.registerMetrics(registry);
    return new RedisRateLimiter(cluster.redis().get(), local);
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
