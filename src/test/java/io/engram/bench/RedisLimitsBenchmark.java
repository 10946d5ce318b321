package io.engram.bench;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RedisRateLimiter;
import io.engram.platform.ratelimit.RedisSlots;
import io.engram.platform.ratelimit.SlidingWindowRateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the shared limits add to a chat request (issue 25): the rate-limit check (one Lua round
 * trip to Redis) and a concurrency slot taken and given back (two round trips), over loopback to
 * the local Redis ({@code REDIS_URL}, default redis://127.0.0.1:6379). Run by
 * {@code bench/jmh.sh RedisLimits}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1)
public class RedisLimitsBenchmark {
  private RedisConnection redis;
  private RedisRateLimiter limiter;
  private RedisSlots slots;

  @Setup
  public void setUp() {
    redis =
        new RedisConnection(System.getenv().getOrDefault("REDIS_URL", "redis://127.0.0.1:6379"));
    limiter = new RedisRateLimiter(redis, new SlidingWindowRateLimiter(Clock.systemUTC()));
    slots = new RedisSlots(redis, ConcurrencySlots.local(), Duration.ofSeconds(15));
  }

  @TearDown
  public void tearDown() {
    slots.close();
    redis.close();
  }

  @Benchmark
  public boolean rateLimitCheck() {
    return limiter.acquire("bench-key", Long.MAX_VALUE).allowed();
  }

  @Benchmark
  public void concurrencySlot() {
    slots.take("bench-org", Long.MAX_VALUE).orElseThrow().close();
  }
}
