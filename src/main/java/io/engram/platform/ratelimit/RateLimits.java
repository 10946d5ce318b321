package io.engram.platform.ratelimit;

import io.engram.platform.config.EngramConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;

/**
 * The node's request rate limiter: counted in-process (one node, the embedded default), or in
 * Redis when {@code REDIS_URL} is set, so every node sharing it admits exactly the limit
 * together. {@code engram_redis_available} shows whether Redis answers (1) or the node counts on
 * its own for now (0).
 */
public record RateLimits(RateLimiter limiter, RedisConnection redis) implements AutoCloseable {

  public static RateLimits open(EngramConfig config, Clock clock, MeterRegistry registry) {
    FixedWindowRateLimiter local = new FixedWindowRateLimiter(clock);
    String url = config.values().get("REDIS_URL");
    if (url.isEmpty()) {
      return new RateLimits(local, null);
    }
    RedisConnection redis = new RedisConnection(url);
    RedisRateLimiter shared = new RedisRateLimiter(redis, local);
    Gauge.builder("engram_redis_available", () -> shared.available() ? 1 : 0)
        .description("1 while Redis answers the rate limits; 0 while this node counts on its own")
        .register(registry);
    return new RateLimits(shared, redis);
  }

  @Override
  public void close() {
    if (redis != null) {
      redis.close();
    }
  }
}
