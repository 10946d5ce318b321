package io.engram.inference.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.inference.engine.EngineException;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Who runs when on the in-process engine: workers, each organization's share, the KV cache. */
class LocalCapacityTest {
  private static final long MIB = 1L << 20;

  private static LocalCapacity capacity(int workers, long kvBytes) {
    return new LocalCapacity(
        new LocalCapacity.Settings(workers, OptionalLong.of(kvBytes), 0.9, 256, true, "none"));
  }

  @Test
  void aGenerationWaitsForTheKvCacheAnotherHoldsAndRunsWhenItIsGivenBack() throws Exception {
    LocalCapacity capacity = capacity(4, 10 * MIB);
    LocalCapacity.Claim first = capacity.acquire("m", "org_a", 4, 6 * MIB, 1000);
    CompletableFuture<LocalCapacity.Claim> second =
        CompletableFuture.supplyAsync(() -> capacity.acquire("m", "org_b", 4, 6 * MIB, 10_000));
    waitUntil(() -> capacity.waiting() == 1);
    assertThat(second).isNotDone();
    assertThat(capacity.kvReserved()).isEqualTo(6 * MIB);
    capacity.release(first);
    LocalCapacity.Claim ran = second.get(5, TimeUnit.SECONDS);
    assertThat(capacity.kvReserved()).isEqualTo(6 * MIB);
    capacity.release(ran);
    assertThat(capacity.kvReserved()).isZero();
    assertThat(capacity.running()).isZero();
  }

  @Test
  void aNeedLargerThanTheWholeCacheIsRefusedAtOnceAndAWaitEndsAtItsTimeout() {
    LocalCapacity capacity = capacity(4, 10 * MIB);
    assertThatThrownBy(() -> capacity.acquire("m", "org_a", 4, 11 * MIB, 60_000))
        .isInstanceOfSatisfying(EngineException.class, e -> {
          assertThat(e.failure()).isEqualTo(EngineException.Failure.REJECTED);
          assertThat(e.getMessage()).contains("KV_CACHE_SIZE_GB", "11 MiB", "10 MiB");
        });
    assertThat(capacity.refusals()).isEqualTo(1);
    LocalCapacity.Claim held = capacity.acquire("m", "org_a", 4, 8 * MIB, 1000);
    long started = System.nanoTime();
    assertThatThrownBy(() -> capacity.acquire("m", "org_b", 4, 8 * MIB, 300))
        .isInstanceOfSatisfying(
            EngineException.class,
            e -> assertThat(e.failure()).isEqualTo(EngineException.Failure.TIMEOUT));
    assertThat(System.nanoTime() - started)
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
    assertThat(capacity.waiting()).isZero();
    capacity.release(held);
  }

  @Test
  void anOrganizationHoldsNoMoreThanItsShareWhileAnotherRunsBesideIt() throws Exception {
    LocalCapacity capacity = capacity(3, 100 * MIB);
    LocalCapacity.Claim first = capacity.acquire("m", "spark", 1, MIB, 1000);
    CompletableFuture<LocalCapacity.Claim> sameOrg =
        CompletableFuture.supplyAsync(() -> capacity.acquire("m", "spark", 1, MIB, 10_000));
    waitUntil(() -> capacity.waiting() == 1);
    LocalCapacity.Claim other = capacity.acquire("m", "scale", 4, MIB, 1000);
    LocalCapacity.Claim otherAgain = capacity.acquire("m", "scale", 4, MIB, 1000);
    assertThat(capacity.running()).isEqualTo(3);
    assertThat(sameOrg).isNotDone();
    capacity.release(other);
    assertThat(sameOrg).as("its share, not the free worker, holds it back").isNotDone();
    capacity.release(first);
    capacity.release(sameOrg.get(5, TimeUnit.SECONDS));
    capacity.release(otherAgain);
    assertThat(capacity.peakFor("spark")).isEqualTo(1);
    assertThat(capacity.peakFor("scale")).isEqualTo(2);
    // Another model's workers are its own: with all of m's busy, n still runs at once.
    List<LocalCapacity.Claim> busy = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      busy.add(capacity.acquire("m", "x", 9, MIB, 100));
    }
    assertThatThrownBy(() -> capacity.acquire("m", "y", 9, MIB, 100))
        .isInstanceOfSatisfying(
            EngineException.class,
            e -> assertThat(e.failure()).isEqualTo(EngineException.Failure.TIMEOUT));
    capacity.release(capacity.acquire("n", "x", 9, MIB, 100));
    busy.forEach(capacity::release);
  }

  @Test
  void byDefaultTheCacheIsTheMemoryShareLessTheLoadedWeights() {
    LocalCapacity capacity = new LocalCapacity(
        new LocalCapacity.Settings(2, OptionalLong.empty(), 0.5, 256, true, "int8"), 1000 * MIB);
    assertThat(capacity.kvCapacity()).isEqualTo(500 * MIB);
    capacity.weightsLoaded("m", 120 * MIB);
    assertThat(capacity.kvCapacity()).isEqualTo(380 * MIB);
    // A model's servable context is what the cache holds, never more than its own.
    assertThat(capacity.servableContext(1_000_000, 8192)).isEqualTo(380 * 128 - 256);
    assertThat(capacity.servableContext(2048, 8192)).isEqualTo(2048);
    capacity.weightsUnloaded("m");
    assertThat(capacity.kvCapacity()).isEqualTo(500 * MIB);
    assertThat(LocalCapacity.kvBytes(10, 8192)).isEqualTo(2 * MIB);
  }

  private static void waitUntil(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition within 5 s").isLessThan(deadline);
      Thread.sleep(10);
    }
  }
}
