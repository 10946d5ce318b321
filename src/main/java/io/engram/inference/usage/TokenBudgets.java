package io.engram.inference.usage;

/**
 * Where the organizations' hourly token budgets are counted on one node ({@link
 * LocalTokenBudgets}); with Redis they are counted there, together with the concurrency slots
 * ({@link RedisAdmissions}). A request reserves tokens before it starts, between what it cannot do
 * without (its prompt and the least reply) and what it could use (the longest reply, the memory
 * block), and settles with what it used when it ends. What is reserved counts as spent until then,
 * so concurrent requests never take more than the hour allows between them.
 */
public interface TokenBudgets {

  /** Tokens granted to one request (none when refused), and the hour as it stands after it. */
  interface Reservation {
    /** Tokens granted; 0 when fewer than the request needs were left. */
    long granted();

    /** Tokens of the hour left after this grant. */
    long remaining();

    /** Seconds until the hour's budget renews. */
    long resetSeconds();

    /** Settles the request, which used {@code used} tokens in all: the rest goes back. Once. */
    void settle(long used);
  }

  /**
   * Reserves at least {@code need} and at most {@code want} tokens of the organization's hour,
   * whose limit is {@code limit}; a reservation granting 0 when fewer than {@code need} are left.
   */
  Reservation reserve(String orgId, long limit, long need, long want);

  /** Tokens of the organization's current hour used or reserved, on every node this counts. */
  long used(String orgId);

  /** Seconds until the current hour ends. */
  long resetSeconds();
}
