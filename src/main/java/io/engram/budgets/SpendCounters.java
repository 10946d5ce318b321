package io.engram.budgets;

import java.util.List;

/**
 * Where what a request may cost is reserved against its budgets before it is sent: on this node
 * ({@link LocalSpendCounters}), or in Redis, shared by every node ({@link RedisSpendCounters}).
 * What is reserved counts as spent until the request settles with what it cost, so concurrent
 * requests never pass a budget between them.
 */
interface SpendCounters {

  /** A reservation: refused by one counter (nothing is held), or held until {@link #settle}. */
  interface Reservation {
    /** The index of the counter that could not hold the cost, or -1 when granted. */
    int refusedBy();

    /** What that counter held (spent and reserved) when it refused; 0 when granted. */
    long used();

    /** The request cost {@code cost} in all (0 when it failed): the difference goes back. Once. */
    void settle(long cost);
  }

  /**
   * Reserves {@code cost} on every counter, whose limits are {@code limits} (same order), or none:
   * refused when one would pass its limit.
   */
  Reservation reserve(String orgId, List<Counter> counters, long[] limits, long cost);

  /** A reservation held on every counter, settled once by {@code settle} with the cost. */
  static Reservation granted(java.util.function.LongConsumer settle) {
    java.util.concurrent.atomic.AtomicBoolean open =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    return new Reservation() {
      @Override
      public int refusedBy() {
        return -1;
      }

      @Override
      public long used() {
        return 0;
      }

      @Override
      public void settle(long cost) {
        if (open.compareAndSet(true, false)) {
          settle.accept(cost);
        }
      }
    };
  }

  /** A reservation that holds nothing. */
  static Reservation refused(int index, long used) {
    return new Reservation() {
      @Override
      public int refusedBy() {
        return index;
      }

      @Override
      public long used() {
        return used;
      }

      @Override
      public void settle(long cost) {}
    };
  }
}
