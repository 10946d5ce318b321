package io.engram.platform.ratelimit;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Slots for requests in flight, at most {@code limit} per key at once: counted in this process
 * ({@link #local()}), or in Redis so that every node shares them ({@link RedisSlots}).
 */
public interface ConcurrencySlots {

  /** A slot held; closing it gives it back (once). */
  interface Slot extends AutoCloseable {
    @Override
    void close();
  }

  /** A slot, or empty when {@code limit} slots of the key are already held. */
  Optional<Slot> take(String key, long limit);

  /** Slots of the key this node holds now. */
  int heldHere(String key);

  /** Slots counted in this process: one node's view. */
  static ConcurrencySlots local() {
    Map<String, AtomicInteger> held = new ConcurrentHashMap<>();
    return new ConcurrencySlots() {
      @Override
      public Optional<Slot> take(String key, long limit) {
        AtomicInteger count = held.computeIfAbsent(key, k -> new AtomicInteger());
        if (count.incrementAndGet() > limit) {
          count.decrementAndGet();
          return Optional.empty();
        }
        java.util.concurrent.atomic.AtomicBoolean open =
            new java.util.concurrent.atomic.AtomicBoolean(true);
        return Optional.of(() -> {
          if (open.compareAndSet(true, false)) {
            count.decrementAndGet();
          }
        });
      }

      @Override
      public int heldHere(String key) {
        AtomicInteger count = held.get(key);
        return count == null ? 0 : count.get();
      }
    };
  }
}
