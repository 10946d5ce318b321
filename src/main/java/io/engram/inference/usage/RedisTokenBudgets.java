package io.engram.inference.usage;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.util.List;

/**
 * The hourly budgets counted in Redis, one counter per organization and hour (by Redis's clock),
 * so that every node's reservations come out of one number: of concurrent requests on any nodes,
 * those that fit pass and the rest are refused, exactly. A reservation is one Lua round trip
 * (check and add, atomically); settling is another (the unused part given back, or a tool loop's
 * extra steps charged). The hour's counter starts from the usage in the database (every node's),
 * so a Redis that restarts mid-hour forgets nothing that was recorded.
 *
 * <p>While Redis cannot be reached, each node counts on its own ({@link LocalTokenBudgets}): the
 * database's hour plus its own reservations, so nodes may together overrun by what they reserve
 * within two seconds. A reservation made in Redis is settled there; if Redis is away by then its
 * unused part stays counted (the budget errs towards refusing, never towards overrunning).
 */
final class RedisTokenBudgets implements TokenBudgets {
  private static final String PREFIX = "engram:tokens:";

  /**
   * KEYS[1] the organization's prefix; ARGV limit, need, want, seed (the hour's usage from the
   * database, or -1 when not read yet). Returns {granted (-1: seed needed), used, hour, reset}.
   */
  private static final RedisScript RESERVE = new RedisScript("""
      local now = tonumber(redis.call('TIME')[1])
      local hour = now - now % 3600
      local key = KEYS[1] .. ':' .. hour
      local used = redis.call('GET', key)
      if not used then
        if tonumber(ARGV[4]) < 0 then return {-1, 0, hour, 3600 - now % 3600} end
        used = tonumber(ARGV[4])
        redis.call('SET', key, used, 'EX', 7200)
      else
        used = tonumber(used)
      end
      local left = tonumber(ARGV[1]) - used
      if left < tonumber(ARGV[2]) then return {0, used, hour, 3600 - now % 3600} end
      local grant = math.min(tonumber(ARGV[3]), left)
      redis.call('INCRBY', key, grant)
      return {grant, used + grant, hour, 3600 - now % 3600}
      """);

  /** KEYS[1] the hour's counter, ARGV[1] the change; nothing when the hour's counter is gone. */
  private static final String SETTLE_SOURCE = """
      if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCRBY', KEYS[1], ARGV[1]) end
      return 1
      """;

  /** KEYS[1] the organization's prefix; the current hour's count, or -1 when none yet. */
  private static final RedisScript USED = new RedisScript("""
      local now = tonumber(redis.call('TIME')[1])
      local used = redis.call('GET', KEYS[1] .. ':' .. (now - now % 3600))
      if not used then return -1 end
      return tonumber(used)
      """);

  private final RedisConnection redis;
  private final UsageLedger ledger;
  private final LocalTokenBudgets fallback;

  RedisTokenBudgets(RedisConnection redis, UsageLedger ledger, LocalTokenBudgets fallback) {
    this.redis = redis;
    this.ledger = ledger;
    this.fallback = fallback;
  }

  @Override
  public Reservation reserve(String orgId, long limit, long need, long want) {
    String[] keys = {PREFIX + orgId};
    try {
      List<Long> answer = reserve(keys, limit, need, want, -1);
      if (answer.get(0) < 0) { // the hour's first request: its counter starts from the database
        answer = reserve(keys, limit, need, want, ledger.tokensThisHour(orgId));
      }
      long granted = answer.get(0);
      long remaining = Math.max(0, limit - answer.get(1));
      long reset = Math.max(1, answer.get(3));
      if (granted <= 0) {
        return LocalTokenBudgets.refused(remaining, reset);
      }
      String hourKey = keys[0] + ":" + answer.get(2);
      return LocalTokenBudgets.granted(
          granted, remaining, reset, used -> settle(hourKey, used - granted));
    } catch (RedisException e) {
      return fallback.reserve(orgId, limit, need, want);
    }
  }

  private List<Long> reserve(String[] keys, long limit, long need, long want, long seed) {
    return RESERVE.run(
        redis,
        ScriptOutputType.MULTI,
        keys,
        Long.toString(limit),
        Long.toString(need),
        Long.toString(want),
        Long.toString(seed));
  }

  private void settle(String hourKey, long change) {
    if (change == 0) {
      return;
    }
    try {
      // Not waited for: the request's end is not held by settling it (EVAL: the script is small,
      // and an asynchronous call cannot fall back from EVALSHA when Redis lost it).
      redis
          .async()
          .eval(
              SETTLE_SOURCE,
              ScriptOutputType.INTEGER,
              new String[] {hourKey},
              Long.toString(change));
    } catch (RedisException e) {
      // the unused part stays counted until the hour ends: errs towards refusing
    }
  }

  @Override
  public long used(String orgId) {
    try {
      Long used = USED.run(redis, ScriptOutputType.INTEGER, new String[] {PREFIX + orgId});
      return used < 0 ? ledger.tokensThisHour(orgId) : used;
    } catch (RedisException e) {
      return fallback.used(orgId);
    }
  }

  @Override
  public long resetSeconds() {
    return ledger.secondsToNextHour();
  }
}
