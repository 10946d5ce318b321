package io.engram.memory;

import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Memories' rows as retrieval last read them, so that a question's hundred candidates are not read
 * from the database again (a millisecond of a memory-on chat's CPU, docs/benchmarks.md). Kept
 * exact by whoever changes a row: {@link MemoryStore} forgets a row once a transaction that
 * changed it commits (and writes retrieval uses through), and the index forgets every memory it
 * syncs, which is how other nodes' logged changes arrive.
 *
 * <p>A read that raced a change must not put back what it read: {@link #generation()} is taken
 * before the read, and {@link #fill} keeps nothing if any row was forgotten or written through
 * since (changes are a few a second; a read takes a millisecond, so almost every fill is kept).
 *
 * <p>The uses other nodes write are not logged (they are ranking signals, written in batches), so
 * where the database is shared a row is kept at most {@code maxAgeNanos}: another node's uses reach
 * this node's ranking within that, as its own reach the database within a batch.
 */
final class RowCache {
  private record Entry(MemoryRecord row, long readAt) {}

  private final ConcurrentHashMap<String, Entry> rows = new ConcurrentHashMap<>();
  private final AtomicLong generation = new AtomicLong();
  private final int capacity;
  private final long maxAgeNanos;
  private final LongSupplier nanoTime;

  RowCache(int capacity, long maxAgeNanos, LongSupplier nanoTime) {
    this.capacity = capacity;
    this.maxAgeNanos = maxAgeNanos;
    this.nanoTime = nanoTime;
  }

  /**
   * Rows a heap can spare: a row with its vector is about 2.5 KB, and the cache takes at most a
   * sixteenth of the heap (a 4 GB heap holds 100,000 rows).
   */
  static int capacityFor(long maxHeapBytes) {
    return (int) Math.clamp(maxHeapBytes / 16 / 2_500, 1_000, 200_000);
  }

  /** To take before reading rows that may be {@link #fill filled} in afterwards. */
  long generation() {
    return generation.get();
  }

  /** The row of {@code id} if it is here and young enough, else null. */
  MemoryRecord get(String id) {
    Entry entry = rows.get(id);
    if (entry == null) {
      return null;
    }
    if (maxAgeNanos != Long.MAX_VALUE && nanoTime.getAsLong() - entry.readAt() > maxAgeNanos) {
      rows.remove(id, entry);
      return null;
    }
    return entry.row();
  }

  /** Keeps rows read from the database, unless a row changed since {@code readGeneration}. */
  void fill(long readGeneration, Collection<MemoryRecord> read) {
    long now = nanoTime.getAsLong();
    for (MemoryRecord row : read) {
      rows.put(row.id(), new Entry(row, now));
    }
    // Checked after the puts: a change that bumped the generation meanwhile may have forgotten a
    // row before it was put, so what this read put goes again (and nothing stale stays).
    if (generation.get() != readGeneration) {
      read.forEach(row -> rows.remove(row.id()));
    }
    if (rows.size() > capacity) {
      shrink();
    }
  }

  /** After a committed change to these memories: their rows are read again when next needed. */
  void forget(Collection<String> ids) {
    generation.incrementAndGet();
    ids.forEach(rows::remove);
  }

  /**
   * After retrieval uses committed: a row kept with the uses the writer read gets the uses it
   * wrote (they are the row's now); a row kept with other uses (another writer came between) is
   * forgotten, to be read again.
   */
  void usesWritten(Map<String, MemoryStore.Uses> read, Map<String, MemoryStore.Uses> written) {
    generation.incrementAndGet();
    written.forEach((id, uses) -> rows.computeIfPresent(id, (key, entry) -> {
      MemoryRecord row = entry.row();
      MemoryStore.Uses before = read.get(id);
      boolean sameAsRead = before != null
          && before.history().equals(row.uses())
          && before.counts().equals(row.counts());
      return sameAsRead ? new Entry(row.withUses(uses), entry.readAt()) : null;
    }));
  }

  int size() {
    return rows.size();
  }

  /** Down to nine tenths of the capacity, in the map's order (as good as random for ids). */
  private void shrink() {
    Iterator<String> ids = rows.keySet().iterator();
    int target = capacity / 10 * 9;
    while (rows.size() > target && ids.hasNext()) {
      ids.next();
      ids.remove();
    }
  }
}
