package io.engram.platform.ratelimit;

import io.engram.platform.cluster.RedisConnection;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * the transition is logged and shown by {@link #available()}.
 */
public final class RedisRateLimiter implements RateLimiter {
  private static final Logger LOG = LoggerFactory.getLogger(RedisRateLimiter.class);
  private static final String PREFIX = "engram:rl:";
  /** KEYS[1] the limit's key prefix; returns {count, milliseconds left in the window, now ms}. */
  private static final String ACQUIRE = """
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local window = math.floor(now / 60000)
      local key = KEYS[1] .. ':' .. window
      local count = redis.call('INCR', key)
      if count == 1 then redis.call('PEXPIRE', key, 61000) end
      return {count, (window + 1) * 60000 - now, now}
      """;

  private static final String USED = """
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local count = redis.call('GET', KEYS[1] .. ':' .. math.floor(now / 60000))
      return tonumber(count or '0')
      """;

  private final RedisConnection redis;
  private final RateLimiter fallback;
  private final String acquireSha;
  private final String usedSha;
  private final AtomicBoolean available = new AtomicBoolean(true);

  /**
   * @param redis the node's connection, which fails fast while Redis is away
   * @param fallback this node's own limiter, used while Redis cannot be reached
   */
  public RedisRateLimiter(RedisConnection redis, RateLimiter fallback) {
    this.redis = redis;
    this.fallback = fallback;
    this.acquireSha = digest(ACQUIRE);
    this.usedSha = digest(USED);
  }

  @Override
  public RateLimitDecision acquire(String key, long limitPerMinute) {
    try {
      List<Long> answer = run(acquireSha, ACQUIRE, ScriptOutputType.MULTI, key);
      reachable();
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
      unreachable(e);
      return fallback.acquire(key, limitPerMinute);
    }
  }

  @Override
  public long used(String key) {
    try {
      Long count = run(usedSha, USED, ScriptOutputType.INTEGER, key);
      reachable();
      return count;
    } catch (RedisException e) {
      unreachable(e);
      return fallback.used(key);
    }
  }

  /** Whether the last call reached Redis (false: this node is counting on its own). */
  public boolean available() {
    return available.get();
  }

  private <T> T run(String sha, String script, ScriptOutputType type, String key) {
    String[] keys = {PREFIX + key};
    RedisCommands<String, String> commands = redis.commands();
    try {
      return commands.evalsha(sha, type, keys);
    } catch (io.lettuce.core.RedisNoScriptException e) {
      return commands.eval(script, type, keys); // loads it; the next call finds it by its digest
    }
  }

  private void reachable() {
    if (available.compareAndSet(false, true)) {
      LOG.info("rate limits: Redis answers again; limits are shared by every node");
    }
  }

  private void unreachable(RedisException e) {
    if (available.compareAndSet(true, false)) {
      LOG.warn(
          "rate limits: Redis cannot be reached ({}); this node counts on its own until it "
              + "answers",
          e.getMessage());
    }
  }

  private static String digest(String script) {
    try {
      return java.util.HexFormat.of()
          .formatHex(java.security.MessageDigest.getInstance("SHA-1")
              .digest(script.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
