package io.engram.platform.ratelimit;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.engram.platform.cluster.RedisUnavailableException;
import java.util.List;

/**
 * The sliding-window counter ({@link SlidingWindow}) kept in Redis, so every node sharing it
 * counts the same requests: of N+k requests at once, exactly N pass, whichever nodes they reach.
 * One round trip per request: a Lua script reads the key's current and previous minute, decides
 * with the same arithmetic as {@link SlidingWindow}, counts the request when it passes and answers
 * the headers' numbers, atomically. Minutes are read from Redis's own clock, so nodes whose clocks
 * differ still count into the same minute.
 *
 * <p>When Redis cannot be reached, the node counts on its own ({@code fallback}, the in-process
 * limiter): each node then admits up to the limit, so across N nodes at most N times the limit
 * pass until Redis answers again. Requests are never refused or failed because Redis is down;
 * the transition is logged and shown by {@link RedisConnection#available()}.
 */
public final class RedisRateLimiter implements RateLimiter {
  private static final String PREFIX = "engram:rl:";
  /**
   * Lua for this class's script and for scripts that count a request with more in the same round
   * trip: {@code window_acquire(prefix, limit, now)} counts one request in the window kept under
   * {@code prefix} when it fits ({@code now} in ms, Redis's clock) and answers {allowed (1/0),
   * remaining, reset (epoch s), retry after (ms)}.
   */
  public static final String LUA_FUNCTIONS = """
      local function window_acquire(prefix, limit, now)
        local window = math.floor(now / 60000)
        local elapsed = now - window * 60000
        local key = prefix .. ':' .. window
        local previous = tonumber(redis.call('GET', prefix .. ':' .. (window - 1)) or '0')
        local current = tonumber(redis.call('GET', key) or '0')
        local weighted = previous * (60000 - elapsed)
        local reset = math.ceil((window + 1) * 60000 / 1000)
        if weighted + (current + 1) * 60000 <= limit * 60000 then
          current = redis.call('INCR', key)
          if current == 1 then redis.call('PEXPIRE', key, 121000) end
          return {1, math.max(0, math.floor((limit * 60000 - weighted - current * 60000) / 60000)),
            reset, 0}
        end
        local wait
        if current + 1 <= limit then
          wait = 60000 - elapsed - math.floor((limit - current - 1) * 60000 / previous)
        else
          wait = 60000 - elapsed + math.ceil((current - limit + 1) * 60000 / current)
        end
        return {0, math.max(0, math.floor((limit * 60000 - weighted - current * 60000) / 60000)),
          reset, math.max(1, wait)}
      end
      """;

  /** KEYS[1] the limit's key prefix, ARGV[1] the limit; {@code window_acquire}'s answer. */
  private static final RedisScript ACQUIRE = new RedisScript(LUA_FUNCTIONS + """
      local t = redis.call('TIME')
      return window_acquire(KEYS[1], tonumber(ARGV[1]),
        tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
      """);

  /** KEYS[1] the key prefix; what the key has used as the limit sees it now (rounded up). */
  private static final RedisScript USED = new RedisScript("""
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local window = math.floor(now / 60000)
      local previous = tonumber(redis.call('GET', KEYS[1] .. ':' .. (window - 1)) or '0')
      local current = tonumber(redis.call('GET', KEYS[1] .. ':' .. window) or '0')
      return math.ceil((previous * (60000 - (now - window * 60000)) + current * 60000) / 60000)
      """);

  private final RedisConnection redis;
  private final RateLimiter fallback;

  /**
   * @param redis the node's connection, which fails fast while Redis is away
   * @param fallback this node's own limiter, used while Redis cannot be reached
   */
  public RedisRateLimiter(RedisConnection redis, RateLimiter fallback) {
    this.redis = redis;
    this.fallback = fallback;
  }

  @Override
  public RateLimitDecision acquire(String key, long limitPerMinute) {
    try {
      return decision(
          ACQUIRE.numbers(redis, List.of(redisKey(key)), Long.toString(limitPerMinute)),
          0,
          limitPerMinute);
    } catch (RedisUnavailableException e) {
      return fallback.acquire(key, limitPerMinute);
    }
  }

  @Override
  public long used(String key) {
    try {
      return USED.number(redis, List.of(redisKey(key)));
    } catch (RedisUnavailableException e) {
      return fallback.used(key);
    }
  }

  /**
   * The decision in a script's answer, {@code window_acquire}'s four numbers from {@code at}: what
   * the X-RateLimit headers report.
   */
  public static RateLimitDecision decision(List<Long> answer, int at, long limitPerMinute) {
    return new RateLimitDecision(
        answer.get(at) == 1,
        limitPerMinute,
        answer.get(at + 1),
        answer.get(at + 2),
        Math.max(1, Math.ceilDiv(answer.get(at + 3), 1000)));
  }

  /** Where the window of {@code key} (as the limiter's callers name it) is kept in Redis. */
  public static String redisKey(String key) {
    return PREFIX + key;
  }
}
