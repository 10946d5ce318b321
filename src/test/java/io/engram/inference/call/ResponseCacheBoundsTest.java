package io.engram.inference.call;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.inference.engine.Generation;
import io.engram.support.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The response cache's bounds, which HTTP alone would need hundreds of megabytes of answers to
 * reach: an organization's share, the node's whole (the organization holding the most gives way,
 * its least recently used answer first), an answer larger than either is not kept, and answers
 * past their time go at the sweep even when nobody asks for them again.
 */
class ResponseCacheBoundsTest {
  private final MutableClock clock = MutableClock.atMinuteStart();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  /** An answer that takes {@code kib} KiB in the cache. */
  private static Generation answer(int kib) {
    return new Generation("x".repeat(kib * 512 - 64), Generation.STOP, new Generation.Usage(1, 1));
  }

  @Test
  void theNodesBoundIsKeptByTheOrganizationHoldingTheMostGivingWayFirst() {
    ResponseCache cache = new ResponseCache(1024 * 1024, clock, registry);
    cache.put("small", "s1", answer(100), 60);
    for (int i = 0; i < 12; i++) {
      cache.put("large", "l" + i, answer(100), 60);
      cache.get("small", "s1"); // the small one's answer is used all along
    }
    assertThat(cache.bytes()).isLessThanOrEqualTo(1024 * 1024);
    // The large organization lost its least recently used answers; the small one kept its own.
    assertThat(cache.get("small", "s1")).isNotNull();
    assertThat(cache.get("large", "l0")).isNull();
    assertThat(cache.get("large", "l11")).isNotNull();
    assertThat(registry.get("engram_inference_cache_bytes").gauge().value())
        .isEqualTo(cache.bytes());
  }

  @Test
  void anOrganizationsShareIsBoundedAndAnAnswerTooLargeIsNotKept() {
    ResponseCache cache = new ResponseCache(1024L * 1024 * 1024, clock, registry);
    for (int i = 0; i < 40; i++) {
      assertThat(cache.put("org", "k" + i, answer(500), 60)).isTrue();
    }
    assertThat(cache.bytes()).isLessThanOrEqualTo(ResponseCache.BYTES_PER_ORGANIZATION);
    assertThat(cache.get("org", "k39")).isNotNull();
    assertThat(cache.get("org", "k0")).isNull();
    long before = cache.bytes();
    assertThat(cache.put("org", "huge", answer(600), 60)).isFalse();
    assertThat(cache.bytes()).isEqualTo(before);
    // Replacing an answer counts it once.
    cache.put("org", "k39", answer(500), 60);
    assertThat(cache.bytes()).isEqualTo(before);
  }

  @Test
  void answersPastTheirTimeGoAtTheSweepEvenUnasked() {
    ResponseCache cache = new ResponseCache(1024L * 1024 * 1024, clock, registry);
    cache.put("one", "a", answer(10), 60);
    cache.put("two", "b", answer(10), 600);
    clock.advance(Duration.ofSeconds(61));
    cache.sweep();
    assertThat(cache.bytes()).isEqualTo(answer(10).text().length() * 2L + 128);
    assertThat(cache.get("two", "b")).isNotNull();
    clock.advance(Duration.ofSeconds(600));
    assertThat(cache.get("two", "b")).isNull();
    cache.sweep();
    assertThat(cache.bytes()).isZero();
  }
}
