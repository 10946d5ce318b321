package io.engram.platform.cluster;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * A Lua script run atomically in Redis, called by its digest (EVALSHA: the source travels once,
 * then only its SHA-1), loaded again by itself when Redis lost it (a restart).
 */
public final class RedisScript {
  private final String source;
  private final String sha;

  public RedisScript(String source) {
    this.source = source;
    this.sha = sha1(source);
  }

  /** Runs the script for its number; a {@link RedisUnavailableException} when Redis is away. */
  public long number(RedisConnection redis, List<String> keys, String... args) {
    return (Long) redis.call(commands -> run(commands, keys, args));
  }

  /** Runs the script for its list of numbers (a Lua table of integers). */
  @SuppressWarnings("unchecked")
  public List<Long> numbers(RedisConnection redis, List<String> keys, String... args) {
    return (List<Long>) redis.call(commands -> run(commands, keys, args));
  }

  private Object run(UnifiedJedis commands, List<String> keys, String[] args) {
    try {
      return commands.evalsha(sha, keys, List.of(args));
    } catch (JedisNoScriptException e) {
      return commands.eval(source, keys, List.of(args));
    }
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
