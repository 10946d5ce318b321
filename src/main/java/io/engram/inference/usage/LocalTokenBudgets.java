package io.engram.inference.usage;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * The hourly budgets counted on this node: the hour's usage from the ledger (every node's, as last
 * read from the database, plus this node's since) and this node's reservations not yet settled.
 * Exact on one node; nodes that share only the database may together overrun by what they reserve
 * within the ledger's refresh (two seconds).
 */
final class LocalTokenBudgets implements TokenBudgets {
  private final UsageLedger ledger;
  /** Per organization: tokens reserved by requests still running here. */
  private final Map<String, AtomicLong> outstanding = new ConcurrentHashMap<>();

  LocalTokenBudgets(UsageLedger ledger) {
    this.ledger = ledger;
  }

  @Override
  public Reservation reserve(String orgId, long limit, long need, long want) {
    AtomicLong reserved = outstanding.computeIfAbsent(orgId, id -> new AtomicLong());
    // One organization's reservations are decided one at a time, so two cannot share a remainder.
    synchronized (reserved) {
      long left = limit - ledger.tokensThisHour(orgId) - reserved.get();
      long reset = ledger.secondsToNextHour();
      if (left < need) {
        return refused(Math.max(0, left), reset);
      }
      long grant = Math.min(want, left);
      reserved.addAndGet(grant);
      // The ledger counts what the request used (recorded as it finished): only the hold goes back.
      return granted(grant, left - grant, reset, used -> reserved.addAndGet(-grant));
    }
  }

  @Override
  public long used(String orgId) {
    AtomicLong reserved = outstanding.get(orgId);
    return ledger.tokensThisHour(orgId) + (reserved == null ? 0 : reserved.get());
  }

  @Override
  public long resetSeconds() {
    return ledger.secondsToNextHour();
  }

  static Reservation refused(long remaining, long resetSeconds) {
    return granted(0, remaining, resetSeconds, used -> {});
  }

  /** A reservation whose settlement runs {@code settle} once, with the tokens used. */
  static Reservation granted(long tokens, long remaining, long resetSeconds, LongConsumer settle) {
    AtomicBoolean open = new AtomicBoolean(true);
    return new Reservation() {
      @Override
      public long granted() {
        return tokens;
      }

      @Override
      public long remaining() {
        return remaining;
      }

      @Override
      public long resetSeconds() {
        return resetSeconds;
      }

      @Override
      public void settle(long used) {
        if (open.compareAndSet(true, false)) {
          settle.accept(used);
        }
      }
    };
  }
}
