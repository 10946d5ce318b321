package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The kept rows' rules (the HTTP view is {@link RetrievalRowCacheTest}): a read that raced a change
 * keeps nothing, written uses replace only the uses their writer read, a shared database's rows
 * age out, and the cache stays within its capacity.
 */
class RowCacheTest {
  private static final Instant T = Instant.parse("2030-01-01T10:00:00Z");
  private final AtomicLong now = new AtomicLong();

  private static MemoryRecord row(String id, UseHistory uses) {
    return new MemoryRecord(
        id,
        "org_1",
        null,
        null,
        null,
        "text of " + id,
        null,
        MemoryKind.FACT,
        0.9,
        null,
        MemoryState.DURABLE,
        MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
        T,
        T,
        T,
        uses,
        MemoryRecord.UseCounts.NONE,
        new float[] {1f},
        Validity.NONE);
  }

  private static final UseHistory FIRST = UseHistory.first(UseKind.ENCODE, T);

  @Test
  void aReadThatRacedAChangeKeepsNothing() {
    RowCache cache = new RowCache(100, Long.MAX_VALUE, now::get);
    long before = cache.generation();
    cache.forget(List.of("mem_b")); // a change committed while the rows were read
    cache.fill(before, List.of(row("mem_a", FIRST), row("mem_b", FIRST)));
    assertThat(cache.get("mem_a")).isNull();
    assertThat(cache.get("mem_b")).isNull();

    cache.fill(cache.generation(), List.of(row("mem_a", FIRST)));
    assertThat(cache.get("mem_a")).isNotNull();
    cache.forget(List.of("mem_a"));
    assertThat(cache.get("mem_a")).isNull();
  }

  @Test
  void writtenUsesReplaceOnlyTheUsesTheirWriterRead() {
    RowCache cache = new RowCache(100, Long.MAX_VALUE, now::get);
    UseHistory answered = FIRST.plus(UseKind.ANSWER, T.plusSeconds(60));
    cache.fill(cache.generation(), List.of(row("mem_a", FIRST), row("mem_b", answered)));
    MemoryStore.Uses read = new MemoryStore.Uses(FIRST, MemoryRecord.UseCounts.NONE);
    MemoryStore.Uses written = new MemoryStore.Uses(
        FIRST.plus(UseKind.ANSWER, T.plusSeconds(120)), new MemoryRecord.UseCounts(0, 3));
    // mem_b is kept with uses another writer wrote after this one read: it must be read again.
    cache.usesWritten(
        Map.of("mem_a", read, "mem_b", read), Map.of("mem_a", written, "mem_b", written));
    assertThat(cache.get("mem_a").uses()).isEqualTo(written.history());
    assertThat(cache.get("mem_a").counts()).isEqualTo(written.counts());
    assertThat(cache.get("mem_a").text()).isEqualTo("text of mem_a");
    assertThat(cache.get("mem_b")).isNull();
  }

  @Test
  void aSharedDatabasesRowsAgeOutAndTheCacheKeepsItsCapacity() {
    RowCache shared = new RowCache(100, 1_000, now::get);
    shared.fill(shared.generation(), List.of(row("mem_a", FIRST)));
    now.addAndGet(999);
    assertThat(shared.get("mem_a")).isNotNull();
    now.addAndGet(2);
    assertThat(shared.get("mem_a")).isNull();

    RowCache small = new RowCache(50, Long.MAX_VALUE, now::get);
    for (int i = 0; i < 500; i++) {
      small.fill(small.generation(), List.of(row("mem_" + i, FIRST)));
      assertThat(small.size()).isLessThanOrEqualTo(50);
    }
    assertThat(RowCache.capacityFor(4L << 30)).isBetween(100_000, 110_000);
    assertThat(RowCache.capacityFor(16L << 20)).isEqualTo(1_000);
  }
}
