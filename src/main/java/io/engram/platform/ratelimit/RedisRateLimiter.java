package io.engram.platform.ratelimit;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.util.List;

/**
 * Fixed one-minute windows counted in Redis, so every node sharing it counts the same requests:
 * of N+k requests in one window, exactly N pass, whichever nodes they reach. One round trip per
 * request: a Lua script increments the window's counter, sets its expiry and answers the count
 * and the window's remaining time, atomically. The window is read from Redis's own clock, so
 * nodes whose clocks differ still count into the same window.
 *
 * <p>When Redis cannot be reached, the node counts on its own ({@code fallback}, the in-process
 * limiter): each node then admits up to the limit, so across N nodes at most N times the limit
 * pass until Redis answers again. Requests are never refused or failed because Redis is down;
 * the transition is logged and shown by {@link RedisConnection#available()}.
 */
public final class RedisRateLimiter implements RateLimiter {
  private static final String PREFIX = "engram:rl:";
  /** KEYS[1] the limit's key prefix; returns {count, milliseconds left in the window, now ms}. */
  private static final RedisScript ACQUIRE = new RedisScript("""
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local window = math.floor(now / 60000)
      local key = KEYS[1] .. ':' .. window
      local count = redis.call('INCR', key)
      if count == 1 then redis.call('PEXPIRE', key, 61000) end
      return {count, (window + 1) * 60000 - now, now}
      """);

  private static final RedisScript USED = new RedisScript("""
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local count = redis.call('GET', KEYS[1] .. ':' .. math.floor(now / 60000))
      return tonumber(count or '0')
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
      List<Long> answer = ACQUIRE.run(redis, ScriptOutputType.MULTI, keys(key));
      long count = answer.get(0);
      long leftMillis = answer.get(1);
      long nowMillis = answer.get(2);
      return new RateLimitDecision(
          count <= limitPerMinute,
          limitPerMinute,
          Math.max(0, limitPerMinute - count),
          Math.ceilDiv(nowMillis + leftMillis, 1000),
          Math.max(1, Math.ceilDiv(leftMillis, 1000)));
    } catch (RedisException e) {
      return fallback.acquire(key, limitPerMinute);
    }
  }

  @Override
  public long used(String key) {
    try {
      return USED.run(redis, ScriptOutputType.INTEGER, keys(key));
    } catch (RedisException e) {
      return fallback.used(key);
    }
  }

  private static String[] keys(String key) {
    return new String[] {PREFIX + key};
  }
}
