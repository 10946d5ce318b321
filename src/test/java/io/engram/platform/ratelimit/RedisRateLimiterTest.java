package io.engram.platform.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.cluster.RedisConnection;
import io.engram.support.TestDatabases;
import java.time.Clock;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The Redis script decides as {@link SlidingWindow} does: for counts put in place in the current
 * and previous minutes, its answer is the Java arithmetic's at some instant between just before and
 * just after the call (Redis reads its own clock, which the test cannot set).
 */
class RedisRateLimiterTest {

  @Test
  void theScriptDecidesAsTheJavaArithmeticForRandomCounts() {
    Random random = new Random(42);
    try (RedisConnection redis = new RedisConnection(TestDatabases.redisUrl())) {
      RedisRateLimiter limiter =
          new RedisRateLimiter(redis, new SlidingWindowRateLimiter(Clock.systemUTC()));
      for (int i = 0; i < 200; i++) {
        String key = "test-" + UUID.randomUUID();
        long limit = 1 + random.nextInt(120);
        long previous = random.nextInt((int) limit * 2);
        long current = random.nextInt((int) limit + 2);
        long before = redisMillis(redis);
        long window = Math.floorDiv(before, SlidingWindow.WINDOW_MILLIS);
        redis.call(r -> r.set("engram:rl:" + key + ":" + (window - 1), Long.toString(previous)));
        redis.call(r -> r.set("engram:rl:" + key + ":" + window, Long.toString(current)));
        RateLimitDecision got = limiter.acquire(key, limit);
        long after = redisMillis(redis);
        if (Math.floorDiv(after, SlidingWindow.WINDOW_MILLIS) != window) {
          continue; // the minute turned during the case: its counts no longer apply
        }
        RateLimitDecision early = SlidingWindow.decide(previous, current, before, limit);
        RateLimitDecision late = SlidingWindow.decide(previous, current, after, limit);
        String seen = "limit " + limit + ", previous " + previous + ", current " + current;
        assertThat(List.of(early.allowed(), late.allowed())).as(seen).contains(got.allowed());
        assertThat(got.remaining()).as(seen).isBetween(early.remaining(), late.remaining());
        assertThat(got.retryAfterSeconds())
            .as(seen)
            .isBetween(late.retryAfterSeconds(), early.retryAfterSeconds());
        assertThat(got.resetEpochSeconds()).as(seen).isEqualTo(early.resetEpochSeconds());
      }
      // And a fresh key admits exactly its limit, counting no refusal.
      String fresh = "test-" + UUID.randomUUID();
      long allowed = 0;
      for (int i = 0; i < 15; i++) {
        allowed += limiter.acquire(fresh, 10).allowed() ? 1 : 0;
      }
      assertThat(allowed).isEqualTo(10);
      assertThat(limiter.used(fresh)).isEqualTo(10);
    }
  }

  private static long redisMillis(RedisConnection redis) {
    List<?> time = (List<?>) redis.call(r -> r.eval("return redis.call('TIME')"));
    return Long.parseLong(time.get(0).toString()) * 1000
        + Long.parseLong(time.get(1).toString()) / 1000;
  }
}
