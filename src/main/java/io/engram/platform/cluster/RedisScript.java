package io.engram.platform.cluster;

import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script run atomically in Redis, called by its digest (EVALSHA: the source travels once,
 * then only its SHA-1), loaded again by itself when Redis lost it (a restart). Each call tells the
 * connection whether Redis answered, which is how the node knows Redis is away.
 */
public final class RedisScript {
  private final String source;
  private final String sha;

  public RedisScript(String source) {
    this.source = source;
    this.sha = sha1(source);
  }

  /** Runs the script; a {@link RedisException} when Redis cannot be reached. */
  public <T> T run(RedisConnection redis, ScriptOutputType type, String[] keys, String... args) {
    try {
      RedisCommands<String, String> commands = redis.commands();
      T answer;
      try {
        answer = commands.evalsha(sha, type, keys, args);
      } catch (RedisNoScriptException e) {
        answer = commands.eval(source, type, keys, args);
      }
      redis.answered();
      return answer;
    } catch (RedisException e) {
      redis.failed(e);
      throw e;
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
