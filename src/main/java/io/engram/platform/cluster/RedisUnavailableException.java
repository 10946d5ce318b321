package io.engram.platform.cluster;

/**
 * Redis did not answer a command (unreachable, timed out, or not tried because it was just found
 * away). Whoever called it falls back on what this node knows on its own.
 */
public final class RedisUnavailableException extends RuntimeException {
  RedisUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
