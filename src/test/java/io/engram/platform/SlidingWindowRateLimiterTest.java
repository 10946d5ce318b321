package io.engram.platform;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.SlidingWindowRateLimiter;
import io.engram.support.MutableClock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The in-process sliding-window limiter: exact within a window, no double burst across two. */
class SlidingWindowRateLimiterTest {

  @Test
  void exactlyTheLimitPassesAndRefusalsAreNotCounted() {
    MutableClock clock = MutableClock.atMinuteStart();
    SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(clock);
    clock.advance(Duration.ofSeconds(15));
    int allowed = 0;
    RateLimitDecision last = null;
    for (int i = 0; i < 13; i++) {
      last = limiter.acquire("k", 10);
      allowed += last.allowed() ? 1 : 0;
    }
    assertThat(allowed).isEqualTo(10);
    assertThat(last.remaining()).isZero();
    assertThat(last.resetEpochSeconds()).isEqualTo(clock.instant().getEpochSecond() + 45);
    assertThat(limiter.used("k")).isEqualTo(10);
    assertThat(limiter.acquire("other", 1).allowed()).isTrue();
  }

  @Test
  void aFullMinuteAtTheEndOfOneWindowLeavesLittleAtTheStartOfTheNext() {
    MutableClock clock = MutableClock.atMinuteStart();
    SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(clock);
    clock.advance(Duration.ofSeconds(50));
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.acquire("k", 10).allowed()).isTrue();
    }
    // 16 s later (6 s into the next minute) the ten still weigh 10 * 54/60 = 9: one more fits,
    // where fixed windows would let ten more through.
    clock.advance(Duration.ofSeconds(16));
    assertThat(limiter.acquire("k", 10).allowed()).isTrue();
    RateLimitDecision refused = limiter.acquire("k", 10);
    assertThat(refused.allowed()).isFalse();
    // Waiting what it says is enough, and not much more than needed.
    clock.advance(Duration.ofSeconds(refused.retryAfterSeconds()));
    assertThat(limiter.acquire("k", 10).allowed()).isTrue();
    assertThat(refused.retryAfterSeconds()).isEqualTo(6); // then the ten weigh 8
    // Two quiet minutes later the key starts afresh.
    clock.advance(Duration.ofMinutes(2));
    assertThat(limiter.acquire("k", 10).remaining()).isEqualTo(9);
  }

  @Test
  void aKeyAtItsLimitInThisMinuteIsToldToWaitIntoTheNext() {
    MutableClock clock = MutableClock.atMinuteStart();
    SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(clock);
    clock.advance(Duration.ofSeconds(30));
    for (int i = 0; i < 4; i++) {
      limiter.acquire("k", 4);
    }
    RateLimitDecision refused = limiter.acquire("k", 4);
    assertThat(refused.allowed()).isFalse();
    // 30 s left of this minute, then the four must weigh at most three: a quarter of the next.
    assertThat(refused.retryAfterSeconds()).isEqualTo(45);
    clock.advance(Duration.ofSeconds(44));
    assertThat(limiter.acquire("k", 4).allowed()).isFalse();
    clock.advance(Duration.ofSeconds(1));
    assertThat(limiter.acquire("k", 4).allowed()).isTrue();
  }

  @Test
  void concurrentRequestsNeverExceedTheLimit() throws Exception {
    SlidingWindowRateLimiter limiter = new SlidingWindowRateLimiter(MutableClock.atMinuteStart());
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
