package io.engram.budgets;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What requests cost, as they end: added to in-memory counts per scope and UTC day, written in one
 * batch every second ({@link #flush()}, and at shutdown), so a request never waits on a database
 * write. {@link #spent} reads a counter's period from the database (every node's spend) at most
 * every {@link #REFRESH}, kept current in between with this node's own; like the hourly token
 * budget's ledger.
 */
final class SpendLedger {
  private static final Logger LOG = LoggerFactory.getLogger(SpendLedger.class);
  static final Duration REFRESH = Duration.ofSeconds(2);
  private static final long DAY_MILLIS = Duration.ofDays(1).toMillis();

  private record Day(String orgId, Budget.Scope scope, String scopeId, long dayStart) {}

  /** A counter's period as last read from the database, plus this node's spend since. */
  private static final class Total {
    final AtomicLong nanos;
    final long readAtNanos = System.nanoTime();

    Total(long nanos) {
      this.nanos = new AtomicLong(nanos);
    }
  }

  private final BudgetStore store;
  private final Clock clock;
  private final Map<Day, Long> pending = new ConcurrentHashMap<>();
  private final Map<Counter, Total> totals = new ConcurrentHashMap<>();

  SpendLedger(BudgetStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
  }

  long now() {
    return clock.millis();
  }

  /** Counts a request's cost for its organization, credential and assistant (those it has). */
  void record(Spender spender, long costNanos) {
    if (costNanos <= 0) {
      return;
    }
    long now = now();
    long day = now - Math.floorMod(now, DAY_MILLIS);
    for (Budget.Scope scope : Budget.Scope.values()) {
      String scopeId = scope.of(spender);
      if (scopeId == null) {
        continue;
      }
      // merge is atomic per day: a flush takes a day's count whole, never while it is added to
      pending.merge(new Day(spender.orgId(), scope, scopeId, day), costNanos, Long::sum);
      for (Budget.Period period : Budget.Period.values()) {
        Total total =
            totals.get(new Counter(spender.orgId(), scope, scopeId, period, period.start(now)));
        if (total != null) {
          total.nanos.addAndGet(costNanos);
        }
      }
    }
  }

  /** What the counter's scope spent in its period, every node's (as of {@link #REFRESH} ago). */
  long spent(Counter counter) {
    Total total = totals.get(counter);
    if (total != null && System.nanoTime() - total.readAtNanos < REFRESH.toNanos()) {
      return total.nanos.get();
    }
    return refresh(counter);
  }

  /**
   * What the counter's scope spent in its period as the database has it now (every node's written
   * spend) with this node's not yet written: what a budget's reader is shown. Read together with
   * {@link #flush}, so that nothing is counted twice or missed between.
   */
  synchronized long refresh(Counter counter) {
    long stored = store.spent(counter);
    long end = counter.period().end(counter.periodStart());
    long unwritten = pending.entrySet().stream()
        .filter(e -> e.getKey().orgId().equals(counter.orgId())
            && e.getKey().scope() == counter.scope()
            && e.getKey().scopeId().equals(counter.scopeId())
            && e.getKey().dayStart() >= counter.periodStart()
            && e.getKey().dayStart() < end)
        .mapToLong(Map.Entry::getValue)
        .sum();
    totals.put(counter, new Total(stored + unwritten));
    // Totals of periods that ended are of no more use.
    totals.keySet().removeIf(kept -> kept.period().end(kept.periodStart()) <= now());
    return stored + unwritten;
  }

  /** Writes what was counted since the last flush; kept for the next one if the write fails. */
  synchronized void flush() {
    List<BudgetStore.DaySpend> rows = new ArrayList<>();
    for (Day day : List.copyOf(pending.keySet())) {
      Long nanos = pending.remove(day);
      if (nanos != null) {
        rows.add(new BudgetStore.DaySpend(
            day.orgId(), day.scope(), day.scopeId(), day.dayStart(), nanos));
      }
    }
    try {
      store.add(rows);
    } catch (RuntimeException e) {
      LOG.warn(
          "could not write spend ({} rows); keeping it for the next flush: {}",
          rows.size(),
          e.toString());
      rows.forEach(row -> pending.merge(
          new Day(row.orgId(), row.scope(), row.scopeId(), row.dayStart()),
          row.costNanos(),
          Long::sum));
    }
  }
}
