package io.engram.platform;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.ratelimit.FixedWindowRateLimiter;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.support.MutableClock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FixedWindowRateLimiterTest {

  @Test
  void exactlyTheLimitPassesInOneWindowAndTheNextWindowStartsAfresh() {
    MutableClock clock = MutableClock.atMinuteStart();
    FixedWindowRateLimiter limiter = new FixedWindowRateLimiter(clock);
    clock.advance(Duration.ofSeconds(15));
    int allowed = 0;
    RateLimitDecision last = null;
    for (int i = 0; i < 13; i++) {
      last = limiter.acquire("k", 10);
      allowed += last.allowed() ? 1 : 0;
    }
    assertThat(allowed).isEqualTo(10);
    assertThat(last.remaining()).isZero();
    assertThat(last.retryAfterSeconds()).isEqualTo(45);
    assertThat(last.resetEpochSeconds()).isEqualTo(clock.instant().getEpochSecond() + 45);
    clock.advance(Duration.ofSeconds(45));
    assertThat(limiter.acquire("k", 10))
        .extracting(RateLimitDecision::allowed, RateLimitDecision::remaining)
        .containsExactly(true, 9L);
    assertThat(limiter.acquire("other", 1).allowed()).isTrue();
  }

  @Test
  void concurrentRequestsNeverExceedTheLimit() throws Exception {
    FixedWindowRateLimiter limiter = new FixedWindowRateLimiter(MutableClock.atMinuteStart());
    AtomicInteger allowed = new AtomicInteger();
    CountDownLatch start = new CountDownLatch(1);
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int i = 0; i < 500; i++) {
        pool.submit(() -> {
          start.await();
          if (limiter.acquire("shared", 120).allowed()) {
            allowed.incrementAndGet();
          }
          return null;
        });
      }
      start.countDown();
    }
    assertThat(allowed.get()).isEqualTo(120);
  }
}
