package io.engram.inference.usage;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

/**
 * How an inference request is let in: a concurrency slot of its organization and, when the plan
 * counts tokens per hour, its reservation of the hour's tokens, decided together (with Redis, in
 * one round trip: {@link RedisAdmissions}; on one node, {@link LocalAdmissions}).
 */
interface Admissions {

  /**
   * Takes one of the organization's {@code concurrency} slots and, when {@code hourlyLimit} is not
   * negative, reserves at least {@code need} and at most {@code want} of the hour's tokens.
   */
  Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want);

  /** Tokens of the organization's current hour used or reserved, on every node this counts. */
  long tokensUsed(String orgId);

  /** Seconds until the current hour ends. */
  long resetSeconds();

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
