package io.engram.budgets;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Budgets counted on this node: each counter's period as the ledger has it (every node's spend as
 * last read from the database, this node's since) plus this node's reservations not yet settled.
 * Exact on one node; nodes that share only the database (no Redis, or Redis away) may together
 * pass a budget by what they reserve within the ledger's refresh (two seconds) and its flush (one).
 */
final class LocalSpendCounters implements SpendCounters {
  private final SpendLedger ledger;
  private final Map<Counter, AtomicLong> outstanding = new ConcurrentHashMap<>();
  private final Map<String, Object> organizations = new ConcurrentHashMap<>();

  LocalSpendCounters(SpendLedger ledger) {
    this.ledger = ledger;
  }

  @Override
  public Reservation reserve(String orgId, List<Counter> counters, long[] limits, long cost) {
    // One organization's reservations are decided one at a time, so two cannot share a remainder.
    Object lock = organizations.computeIfAbsent(orgId, id -> new Object());
    synchronized (lock) {
      for (int i = 0; i < counters.size(); i++) {
        long used = ledger.spent(counters.get(i)) + held(counters.get(i)).get();
        if (cost > 0 && used + cost > limits[i]) {
          return SpendCounters.refused(i, used);
        }
      }
      counters.forEach(counter -> held(counter).addAndGet(cost));
    }
    // The ledger counts what the request cost (recorded before this): only the hold goes back.
    // Under the organization's lock, so a counter left holding nothing can go (a period's
    // counters would otherwise stay for good) without a reservation adding to it meanwhile.
    return SpendCounters.granted(spent -> {
      synchronized (lock) {
        counters.forEach(counter -> {
          if (held(counter).addAndGet(-cost) == 0) {
            outstanding.remove(counter);
          }
        });
      }
    });
  }

  private AtomicLong held(Counter counter) {
    return outstanding.computeIfAbsent(counter, c -> new AtomicLong());
  }
}
