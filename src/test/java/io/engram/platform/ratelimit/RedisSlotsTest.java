package io.engram.platform.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.cluster.RedisConnection;
import io.engram.support.TestDatabases;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Concurrency slots in Redis, as two nodes see them: shared (one node's slots count against the
 * other's), given back on close, kept alive by their node's renewals, and lost within the lease
 * when their node stops renewing (a node killed holding them).
 */
class RedisSlotsTest {
  private final String key = "test-" + UUID.randomUUID();

  @Test
  void slotsAreSharedGivenBackAndLostWithinTheLeaseWhenANodeDies() throws Exception {
    try (RedisConnection redis = new RedisConnection(TestDatabases.redisUrl())) {
      RedisSlots first = new RedisSlots(redis, ConcurrencySlots.local(), Duration.ofMillis(900));
      try (RedisSlots second =
          new RedisSlots(redis, ConcurrencySlots.local(), Duration.ofMillis(900))) {
        Optional<ConcurrencySlots.Slot> a = first.take(key, 2);
        Optional<ConcurrencySlots.Slot> b = first.take(key, 2);
        assertThat(a).isPresent();
        assertThat(b).isPresent();
        assertThat(second.take(key, 2)).isEmpty();
        assertThat(first.heldHere(key)).isEqualTo(2);

        a.get().close();
        a.get().close(); // twice changes nothing
        Optional<ConcurrencySlots.Slot> c = second.take(key, 2);
        assertThat(c).isPresent();
        assertThat(second.take(key, 2)).isEmpty();

        // Renewed, a slot outlives its lease many times over.
        Thread.sleep(2_000);
        assertThat(second.take(key, 2)).isEmpty();

        // The first node dies holding b: no release, no renewal. Within the lease it is free.
        first.close();
        long died = System.nanoTime();
        Optional<ConcurrencySlots.Slot> freed = Optional.empty();
        while (freed.isEmpty()) {
          assertThat(Duration.ofNanos(System.nanoTime() - died)).isLessThan(Duration.ofSeconds(3));
          Thread.sleep(50);
          freed = second.take(key, 2);
        }
        c.get().close();
        freed.get().close();
      }
    }
  }

  @Test
  void withoutRedisTheNodeCountsItsOwnSlots() {
    try (RedisConnection away = new RedisConnection("redis://127.0.0.1:1");
        RedisSlots slots = new RedisSlots(away, ConcurrencySlots.local(), Duration.ofSeconds(5))) {
      Optional<ConcurrencySlots.Slot> one = slots.take(key, 1);
      assertThat(one).isPresent();
      assertThat(slots.take(key, 1)).isEmpty();
      one.get().close();
      assertThat(slots.take(key, 1)).isPresent();
    }
  }
}
