package io.engram.budgets;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.engram.platform.cluster.RedisUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Budgets counted in Redis, shared by every node: one script checks and reserves a request's cost
 * on all its counters (its organization's, its key's, its assistant's: one hash slot, the
 * organization's) atomically, so of concurrent requests on any nodes those that fit pass and the
 * rest are refused, exactly. A counter starts from the period's spend in the database (every
 * node's), so a Redis that restarts forgets nothing that was written; it lives a day past its
 * period. While Redis cannot be reached, each node counts on its own ({@code fallback}); a
 * reservation whose settlement cannot reach Redis stays counted (the budget errs towards refusing).
 */
final class RedisSpendCounters implements SpendCounters {
  private static final long DAY_SECONDS = Duration.ofDays(1).toSeconds();

  /**
   * KEYS: the counters; ARGV[1] the cost, then per counter its limit, its seed (the period's spend
   * in the database, or -1 when not read yet) and its time to live. Answers {-1, i} seed counter i,
   * {0, i, used} counter i cannot hold the cost, {1} reserved on every counter.
   */
  private static final RedisScript RESERVE = new RedisScript("""
      local cost = tonumber(ARGV[1])
      for i, key in ipairs(KEYS) do
        local at = 2 + (i - 1) * 3
        local used = redis.call('GET', key)
        if not used then
          local seed = tonumber(ARGV[at + 1])
          if seed < 0 then return {-1, i} end
          redis.call('SET', key, seed, 'EX', tonumber(ARGV[at + 2]))
          used = seed
        end
        used = tonumber(used)
        if cost > 0 and used + cost > tonumber(ARGV[at]) then return {0, i, used} end
      end
      if cost > 0 then
        for _, key in ipairs(KEYS) do redis.call('INCRBY', key, cost) end
      end
      return {1}
      """);

  /** KEYS: the counters; ARGV[1] what to add (negative: given back); gone counters left alone. */
  private static final RedisScript SETTLE = new RedisScript("""
      for _, key in ipairs(KEYS) do
        if redis.call('EXISTS', key) == 1 then redis.call('INCRBY', key, ARGV[1]) end
      end
      return 1
      """);

  private final RedisConnection redis;
  private final SpendLedger ledger;
  private final SpendCounters fallback;

  RedisSpendCounters(RedisConnection redis, SpendLedger ledger, SpendCounters fallback) {
    this.redis = redis;
    this.ledger = ledger;
    this.fallback = fallback;
  }

  @Override
  public Reservation reserve(String orgId, List<Counter> counters, long[] limits, long cost) {
    List<String> keys = counters.stream().map(Counter::redisKey).toList();
    List<Long> answer;
    try {
      answer = RESERVE.numbers(redis, keys, arguments(counters, limits, cost, false));
      if (answer.getFirst() < 0) { // a counter's first request of its period
        answer = RESERVE.numbers(redis, keys, arguments(counters, limits, cost, true));
      }
    } catch (RedisUnavailableException e) {
      return fallback.reserve(orgId, counters, limits, cost);
    }
    if (answer.getFirst() == 0) {
      return SpendCounters.refused((int) (answer.get(1) - 1), answer.get(2));
    }
    return SpendCounters.granted(spent -> {
      if (spent != cost) {
        try {
          SETTLE.number(redis, keys, Long.toString(spent - cost));
        } catch (RedisUnavailableException e) {
          // what was reserved stays counted until the period ends: the budget errs to refusing
        }
      }
    });
  }

  private String[] arguments(List<Counter> counters, long[] limits, long cost, boolean seeded) {
    List<String> arguments = new ArrayList<>();
    arguments.add(Long.toString(cost));
    long now = ledger.now();
    for (int i = 0; i < counters.size(); i++) {
      Counter counter = counters.get(i);
      arguments.add(Long.toString(limits[i]));
      // A seed is read fresh from the database, never from this node's two-second cache: that holds
      // only this node's spend since it was read, and a counter Redis lost (restarted) must start
      // from every node's.
      arguments.add(Long.toString(seeded ? ledger.refresh(counter) : -1));
      long end = counter.period().end(counter.periodStart());
      arguments.add(Long.toString(Math.max(1, (end - now) / 1000) + DAY_SECONDS));
    }
    return arguments.toArray(String[]::new);
  }
}
