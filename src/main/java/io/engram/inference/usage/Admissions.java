package io.engram.inference.usage;

import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RateLimitDecision;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;

/**
 * How an inference request is let in: a concurrency slot of its organization and, when the plan
 * counts tokens per hour, its reservation of the hour's tokens, decided together (with Redis, in
 * one round trip: {@link RedisAdmissions}; on one node, {@link LocalAdmissions}).
 *
 * <p>A route that runs a model is let in in two steps: at the door ({@link #enter}), before its
 * body is read, the request is counted in its credential's rate window and takes the slot, together
 * (one round trip with Redis); once its tokens are known, {@link #admit(Entry, long, long, long)}
 * reserves them (no round trip when the plan counts none). Other callers (a WebSocket's messages)
 * take the slot and the tokens at once ({@link #admit(String, long, long, long, long)}).
 */
interface Admissions {

  /**
   * Counts the request in the rate window {@code windowKey} (as {@link
   * io.engram.platform.ratelimit.RateLimiter} names it) and, when the window lets it in, takes one
   * of the organization's {@code concurrency} slots.
   */
  Entry enter(String orgId, long concurrency, String windowKey, long windowLimit);

  /**
   * Reserves the tokens of a request that holds the entry's slot, as {@link #admit(String, long,
   * long, long, long)} does; the admission now owns the slot (and gives it back when refused).
   */
  Admission admit(Entry entry, long hourlyLimit, long need, long want);

  /**
   * Takes one of the organization's {@code concurrency} slots and, when {@code hourlyLimit} is not
   * negative, reserves at least {@code need} and at most {@code want} of the hour's tokens.
   */
  Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want);

  /** Tokens of the organization's current hour used or reserved, on every node this counts. */
  long tokensUsed(String orgId);

  /** Seconds until the current hour ends. */
  long resetSeconds();

  /**
   * A request at the door: its rate window's decision and, when it holds one, a concurrency slot
   * that the request's admission takes over ({@link #handOver}) or {@link #close} gives back.
   */
  final class Entry implements AutoCloseable {
    private final String orgId;
    private final RateLimitDecision window;
    private final AtomicReference<ConcurrencySlots.Slot> slot;

    /** {@code slot} null: none taken (the window or the concurrency limit refused). */
    Entry(String orgId, RateLimitDecision window, ConcurrencySlots.Slot slot) {
      this.orgId = orgId;
      this.window = window;
      this.slot = new AtomicReference<>(slot);
    }

    String orgId() {
      return orgId;
    }

    RateLimitDecision window() {
      return window;
    }

    /** Whether a slot is held (and not yet handed over or given back). */
    boolean holdsSlot() {
      return slot.get() != null;
    }

    /** The slot, once: its admission owns it from now on; null when there is none (any more). */
    ConcurrencySlots.Slot handOver() {
      return slot.getAndSet(null);
    }

    /** Gives the slot back unless an admission took it over. */
    @Override
    public void close() {
      ConcurrencySlots.Slot held = handOver();
      if (held != null) {
        held.close();
      }
    }
  }

  /** What the request got. */
  enum Outcome {
    ADMITTED,
    TOO_MANY_IN_FLIGHT,
    OUT_OF_TOKENS
  }

  /**
   * A request's admission: refused (nothing held), or a slot and tokens held until {@link #end}.
   *
   * @param granted tokens reserved (0 when refused, MAX_VALUE when the plan has no hourly budget)
   * @param remaining tokens of the hour left after the grant (MAX_VALUE without a budget)
   * @param resetSeconds seconds until the hour's budget renews
   */
  final class Admission {
    private final Outcome outcome;
    private final long granted;
    private final long remaining;
    private final long resetSeconds;
    private final LongConsumer ending;
    private final AtomicBoolean open = new AtomicBoolean(true);

    private Admission(
        Outcome outcome, long granted, long remaining, long resetSeconds, LongConsumer ending) {
      this.outcome = outcome;
      this.granted = granted;
      this.remaining = remaining;
      this.resetSeconds = resetSeconds;
      this.ending = ending;
    }

    static Admission tooManyInFlight() {
      return new Admission(Outcome.TOO_MANY_IN_FLIGHT, 0, 0, 0, used -> {});
    }

    static Admission outOfTokens(long remaining, long resetSeconds) {
      return new Admission(Outcome.OUT_OF_TOKENS, 0, remaining, resetSeconds, used -> {});
    }

    /** Let in; {@code ending} gives back the slot and settles the tokens with what was used. */
    static Admission admitted(
        long granted, long remaining, long resetSeconds, LongConsumer ending) {
      return new Admission(Outcome.ADMITTED, granted, remaining, resetSeconds, ending);
    }

    Outcome outcome() {
      return outcome;
    }

    long granted() {
      return granted;
    }

    long remaining() {
      return remaining;
    }

    long resetSeconds() {
      return resetSeconds;
    }

    /** The request ended having used {@code used} tokens in all: its slot and the rest go back. */
    void end(long used) {
      if (open.compareAndSet(true, false)) {
        ending.accept(used);
      }
    }
  }
}
