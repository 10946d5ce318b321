package io.engram.inference.usage;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.engram.platform.cluster.RedisUnavailableException;
import io.engram.platform.ratelimit.ConcurrencySlots;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RedisRateLimiter;
import io.engram.platform.ratelimit.RedisSlots;
import java.util.List;
import java.util.function.LongFunction;

/**
 * Admissions decided in Redis, shared by every node: one script takes the organization's
 * concurrency slot (a lease, {@link RedisSlots}) and reserves its tokens of the hour (one counter
 * per organization and hour, by Redis's clock), atomically, in one round trip; one more, when the
 * request ends, gives the slot back and settles the tokens (the unused part returned, a tool
 * loop's extra steps charged). Of concurrent requests on any nodes, those that fit pass and the
 * rest are refused, exactly. (Taking, reserving, giving back and settling were four round trips
 * before: each costs a request's virtual thread two wake-ups, docs/benchmarks.md.) At the door of
 * a route, one script counts the request in its rate window and takes the slot ({@link #enter});
 * the tokens, known later, are reserved by one more only when the plan counts them.
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
   * {@code tokens_reserve(prefix, now, limit, need, want, seed)}: reserves at least {@code need}
   * and at most {@code want} of the hour's tokens (one counter per organization and hour, by
   * Redis's clock, started from {@code seed}, the hour's usage in the database). Answers {-1} seed
   * needed (seed was -1), {2, 0, used, hour, reset} out of tokens, {1, granted, used, hour, reset}.
   */
  private static final String TOKEN_FUNCTIONS = """
      local function tokens_reserve(prefix, now, limit, need, want, seed)
        local seconds = math.floor(now / 1000)
        local hour = seconds - seconds % 3600
        local reset = 3600 - seconds % 3600
        local key = prefix .. ':' .. hour
        local used = redis.call('GET', key)
        if not used then
          if seed < 0 then return {-1} end
          used = seed
          redis.call('SET', key, used, 'EX', 7200)
        else
          used = tonumber(used)
        end
        local left = limit - used
        if left < need then return {2, 0, used, hour, reset} end
        local grant = math.min(want, left)
        redis.call('INCRBY', key, grant)
        return {1, grant, used + grant, hour, reset}
      end
      """;

  /**
   * KEYS[1] the organization's slots, KEYS[2] its token counters' prefix; ARGV: slot id,
   * concurrency, lease ms, hourly limit (-1: none), need, want, seed (or -1 when not read yet).
   * Returns {0} too many in flight, else {@code tokens_reserve}'s answer ({1, 0, 0, 0, 0} without
   * a budget); the slot is taken only with the tokens.
   */
  private static final RedisScript ADMIT =
      new RedisScript(RedisSlots.LUA_FUNCTIONS + TOKEN_FUNCTIONS + """
          local now = slot_now()
          if not slot_free(KEYS[1], now, ARGV[2]) then return {0} end
          local answer = {1, 0, 0, 0, 0}
          local limit = tonumber(ARGV[4])
          if limit >= 0 then
            answer = tokens_reserve(KEYS[2], now, limit, tonumber(ARGV[5]), tonumber(ARGV[6]),
              tonumber(ARGV[7]))
            if answer[1] ~= 1 then return answer end
          end
          slot_add(KEYS[1], ARGV[1], now, ARGV[3])
          return answer
          """);

  /**
   * The door: KEYS[1] the rate window's prefix, KEYS[2] the organization's slots; ARGV: window
   * limit, slot id, concurrency, lease ms. Returns {slot taken (1/0)} followed by {@code
   * window_acquire}'s four numbers; a slot is taken only when the window lets the request in.
   */
  private static final RedisScript ENTER =
      new RedisScript(RedisRateLimiter.LUA_FUNCTIONS + RedisSlots.LUA_FUNCTIONS + """
          local now = slot_now()
          local window = window_acquire(KEYS[1], tonumber(ARGV[1]), now)
          local taken = 0
          if window[1] == 1 and slot_free(KEYS[2], now, ARGV[3]) then
            slot_add(KEYS[2], ARGV[2], now, ARGV[4])
            taken = 1
          end
          return {taken, window[1], window[2], window[3], window[4]}
          """);

  /** KEYS[1] the token counters' prefix; ARGV: limit, need, want, seed: {@code tokens_reserve}. */
  private static final RedisScript RESERVE =
      new RedisScript(RedisSlots.LUA_FUNCTIONS + TOKEN_FUNCTIONS + """
          return tokens_reserve(KEYS[1], slot_now(), tonumber(ARGV[1]), tonumber(ARGV[2]),
            tonumber(ARGV[3]), tonumber(ARGV[4]))
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
  private final LocalAdmissions fallback;

  RedisAdmissions(
      RedisConnection redis, RedisSlots slots, UsageLedger ledger, LocalAdmissions fallback) {
    this.redis = redis;
    this.slots = slots;
    this.ledger = ledger;
    this.fallback = fallback;
  }

  @Override
  public Entry enter(String orgId, long concurrency, String windowKey, long windowLimit) {
    RedisSlots.Claim claim = slots.claim(orgId);
    List<Long> answer;
    try {
      answer = ENTER.numbers(
          redis,
          List.of(RedisRateLimiter.redisKey(windowKey), claim.redisKey()),
          Long.toString(windowLimit),
          claim.id(),
          Long.toString(concurrency),
          Long.toString(slots.leaseMillis()));
    } catch (RedisUnavailableException e) {
      return fallback.enter(orgId, concurrency, windowKey, windowLimit);
    }
    RateLimitDecision window = RedisRateLimiter.decision(answer, 1, windowLimit);
    return new Entry(orgId, window, answer.getFirst() == 1 ? new HeldSlot(claim) : null);
  }

  @Override
  public Admission admit(Entry entry, long hourlyLimit, long need, long want) {
    ConcurrencySlots.Slot slot = LocalAdmissions.held(entry);
    String orgId = entry.orgId();
    if (!(slot instanceof HeldSlot held)) { // taken on this node while Redis was away
      return fallback.reserve(slot, orgId, hourlyLimit, need, want);
    }
    if (hourlyLimit < 0) {
      return Admission.admitted(Long.MAX_VALUE, Long.MAX_VALUE, 0, used -> held.close());
    }
    List<Long> answer;
    try {
      answer = seeded(
          orgId,
          seed -> RESERVE.numbers(
              redis,
              List.of(tokensKey(orgId)),
              Long.toString(hourlyLimit),
              Long.toString(need),
              Long.toString(want),
              Long.toString(seed)));
    } catch (RedisUnavailableException e) {
      return fallback.reserve(held, orgId, hourlyLimit, need, want);
    }
    if (answer.getFirst() == 2) {
      held.close();
      return Admission.outOfTokens(remaining(answer, hourlyLimit), reset(answer));
    }
    return granted(answer, held, orgId, hourlyLimit);
  }

  @Override
  public Admission admit(String orgId, long concurrency, long hourlyLimit, long need, long want) {
    RedisSlots.Claim claim = slots.claim(orgId);
    List<Long> answer;
    try {
      answer = seeded(
          orgId,
          seed -> ADMIT.numbers(
              redis,
              List.of(claim.redisKey(), tokensKey(orgId)),
              claim.id(),
              Long.toString(concurrency),
              Long.toString(slots.leaseMillis()),
              Long.toString(hourlyLimit),
              Long.toString(need),
              Long.toString(want),
              Long.toString(seed)));
    } catch (RedisUnavailableException e) {
      return fallback.admit(orgId, concurrency, hourlyLimit, need, want);
    }
    long outcome = answer.getFirst();
    if (outcome == 0) {
      return Admission.tooManyInFlight();
    }
    if (outcome == 2) {
      return Admission.outOfTokens(remaining(answer, hourlyLimit), reset(answer));
    }
    HeldSlot held = new HeldSlot(claim);
    if (hourlyLimit < 0) {
      return Admission.admitted(Long.MAX_VALUE, Long.MAX_VALUE, 0, used -> held.close());
    }
    return granted(answer, held, orgId, hourlyLimit);
  }

  /**
   * Sends a script that reserves tokens, with the seed -1 first; the hour's first request sends it
   * again with the hour's usage from the database, which its counter then starts from.
   */
  private List<Long> seeded(String orgId, LongFunction<List<Long>> send) {
    List<Long> answer = send.apply(-1);
    return answer.getFirst() < 0 ? send.apply(ledger.tokensThisHour(orgId)) : answer;
  }

  private static long remaining(List<Long> answer, long hourlyLimit) {
    return Math.max(0, hourlyLimit - answer.get(2));
  }

  private static long reset(List<Long> answer) {
    return Math.max(1, answer.get(4));
  }

  /** Tokens reserved for a request holding {@code held}: its end settles them with the slot. */
  private Admission granted(List<Long> answer, HeldSlot held, String orgId, long hourlyLimit) {
    long granted = answer.get(1);
    held.hourKey = tokensKey(orgId) + ":" + answer.get(3);
    return Admission.admitted(granted, remaining(answer, hourlyLimit), reset(answer), used -> {
      held.change = used - granted;
      held.close();
    });
  }

  /**
   * A slot held in Redis: its lease is renewed until it is closed, which gives it back and
   * settles the tokens reserved with it ({@code hourKey} null: none) by {@code change}.
   */
  private final class HeldSlot implements ConcurrencySlots.Slot {
    private final ConcurrencySlots.Slot lease;
    private volatile String hourKey;
    private volatile long change;

    HeldSlot(RedisSlots.Claim claim) {
      this.lease = slots.took(claim, () -> end(claim, hourKey, change));
    }

    @Override
    public void close() {
      lease.close();
    }
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
