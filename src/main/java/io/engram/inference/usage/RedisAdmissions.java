package io.engram.inference.usage;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.engram.platform.cluster.RedisUnavailableException;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RedisSlots;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Admissions decided in Redis, shared by every node: one script takes the organization's
 * concurrency slot (a lease, {@link RedisSlots}) and reserves its tokens of the hour (one counter
 * per organization and hour, by Redis's clock), atomically, in one round trip; one more, when the
 * request ends, gives the slot back and settles the tokens (the unused part returned, a tool
 * loop's extra steps charged). Of concurrent requests on any nodes, those that fit pass and the
 * rest are refused, exactly. (Taking, reserving, giving back and settling were four round trips
 * before: each costs a request's virtual thread two wake-ups, docs/benchmarks.md.)
 *
 * <p>The hour's counter starts from the usage in the database (every node's), so a Redis that
 * restarts mid-hour forgets nothing that was recorded. While Redis cannot be reached, each node
 * admits on its own ({@code fallback}: its slots, the database's hour plus its own reservations),
 * so nodes may together overrun by what they reserve within two seconds; a reservation made in
 * Redis whose end cannot reach it stays counted (the budget errs towards refusing).
 */
final class RedisAdmissions implements Admissions {
  private static final String TOKENS = "engram:tokens:";

  /**
   * KEYS[1] the organization's slots, KEYS[2] its token counters' prefix; ARGV: slot id,
   * concurrency, lease ms, hourly limit (-1: none), need, want, seed (the hour's usage from the
   * database, or -1 when not read yet). Returns {0} too many in flight, {-1} seed needed, {2, 0,
   * used, hour, reset} out of tokens, {1, granted, used, hour, reset} admitted.
   */
  private static final RedisScript ADMIT = new RedisScript(RedisSlots.LUA_FUNCTIONS + """
      local now = slot_now()
      if not slot_free(KEYS[1], now, ARGV[2]) then return {0} end
      local answer = {1, 0, 0, 0, 0}
      local limit = tonumber(ARGV[4])
      if limit >= 0 then
        local seconds = math.floor(now / 1000)
        local hour = seconds - seconds % 3600
        local reset = 3600 - seconds % 3600
        local key = KEYS[2] .. ':' .. hour
        local used = redis.call('GET', key)
        if not used then
          if tonumber(ARGV[7]) < 0 then return {-1} end
          used = tonumber(ARGV[7])
          redis.call('SET', key, used, 'EX', 7200)
        else
          used = tonumber(used)
        end
        local left = limit - used
        if left < tonumber(ARGV[5]) then return {2, 0, used, hour, reset} end
        local grant = math.min(tonumber(ARGV[6]), left)
        redis.call('INCRBY', key, grant)
        answer = {1, grant, used + grant, hour, reset}
      end
      slot_add(KEYS[1], ARGV[1], now, ARGV[3])
      return answer
      """);

  /**
   * KEYS[1] the organization's slots, KEYS[2] the hour's token counter; ARGV[1] the slot id,
   * ARGV[2] the tokens to give back (negative) or charge. The counter is left alone when its hour
   * has gone.
   */
  private static final RedisScript END = new RedisScript("""
      redis.call('ZREM', KEYS[1], ARGV[1])
      if ARGV[2] ~= '0' and redis.call('EXISTS', KEYS[2]) == 1 then
        redis.call('INCRBY', KEYS[2], ARGV[2])
      end
      return 1
      """);

  /** KEYS[1] the organization's token prefix; the current hour's count, or -1 when none yet. */
  private static final RedisScript USED = new RedisScript("""
      local now = tonumber(redis.call('TIME')[1])
      local used = redis.call('GET', KEYS[1] .. ':' .. (now - now % 3600))
      if not used then return -1 end
      return tonumber(used)
      """);

  private final RedisConnection redis;
  private final RedisSlots slots;
  private final UsageLedger ledger;
  private final Admissions fallback;

  RedisAdmissions(
      RedisConnection redis, RedisSlots slots, UsageLedger ledger, Admissions fallback) {
    this.redis = redis;
    this.slots = slots;
    this.ledger = ledger;
    this.fallback = fallback;
  }

  @Override
  public Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want) {
    RedisSlots.Claim claim = slots.claim(orgId);
    List<String> keys = List.of(claim.redisKey(), tokensKey(orgId));
    Request request = new Request(keys, claim, concurrency, hourlyLimit, need, want);
    List<Long> answer;
    try {
      answer = send(request, -1);
      if (answer.getFirst() < 0) { // the hour's first request: its counter starts from the database
        answer = send(request, ledger.tokensThisHour(orgId));
      }
    } catch (RedisUnavailableException e) {
      return fallback.admit(orgId, concurrency, hourlyLimit, need, want);
    }
    long outcome = answer.getFirst();
    if (outcome == 0) {
      return Admission.tooManyInFlight();
    }
    if (hourlyLimit < 0) {
      ConcurrencySlots.Slot slot = slots.took(claim, () -> end(claim, null, 0));
      return Admission.admitted(Long.MAX_VALUE, Long.MAX_VALUE, 0, used -> slot.close());
    }
    long remaining = Math.max(0, hourlyLimit - answer.get(2));
    long reset = Math.max(1, answer.get(4));
    if (outcome == 2) {
      return Admission.outOfTokens(remaining, reset);
    }
    long granted = answer.get(1);
    String hourKey = keys.get(1) + ":" + answer.get(3);
    AtomicLong change = new AtomicLong();
    ConcurrencySlots.Slot slot = slots.took(claim, () -> end(claim, hourKey, change.get()));
    return Admission.admitted(granted, remaining, reset, used -> {
      change.set(used - granted);
      slot.close();
    });
  }

  /** The arguments of one admission, sent once, or twice when the hour's count must be seeded. */
  private record Request(
      List<String> keys,
      RedisSlots.Claim claim,
      long concurrency,
      long hourlyLimit,
      long need,
      long want) {}

  private List<Long> send(Request request, long seed) {
    return ADMIT.numbers(
        redis,
        request.keys(),
        request.claim().id(),
        Long.toString(request.concurrency()),
        Long.toString(slots.leaseMillis()),
        Long.toString(request.hourlyLimit()),
        Long.toString(request.need()),
        Long.toString(request.want()),
        Long.toString(seed));
  }

  /**
   * Gives the slot back and settles the tokens ({@code hourKey} null: no budget), waited for (one
   * short round trip) so that the caller's next request, which may follow at once on any node,
   * finds both.
   */
  private void end(RedisSlots.Claim claim, String hourKey, long change) {
    try {
      END.number(
          redis,
          List.of(claim.redisKey(), hourKey == null ? claim.redisKey() : hourKey),
          claim.id(),
          Long.toString(hourKey == null ? 0 : change));
    } catch (RedisUnavailableException e) {
      // the slot's lease lapses by itself; the unused tokens stay counted until the hour ends
    }
  }

  @Override
  public long tokensUsed(String orgId) {
    try {
      long used = USED.number(redis, List.of(tokensKey(orgId)));
      return used < 0 ? ledger.tokensThisHour(orgId) : used;
    } catch (RedisUnavailableException e) {
      return fallback.tokensUsed(orgId);
    }
  }

  @Override
  public long resetSeconds() {
    return ledger.secondsToNextHour();
  }

  /** In braces, the hash tag the organization's slots share: one script touches both. */
  private static String tokensKey(String orgId) {
    return TOKENS + "{" + orgId + "}";
  }
}
