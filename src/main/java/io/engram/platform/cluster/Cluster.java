package io.engram.platform.cluster;

import java.util.Optional;

/**
 * What this node shares with the others beyond the database: nothing (no {@code REDIS_URL}), or a
 * Redis connection that carries the shared rate limits and the change messages ({@link NodeBus}).
 */
public record Cluster(Optional<RedisConnection> redis, NodeBus bus) implements AutoCloseable {

  public static Cluster open(String redisUrl) {
    if (redisUrl == null || redisUrl.isEmpty()) {
      return new Cluster(Optional.empty(), NodeBus.LOCAL);
    }
    RedisConnection redis = new RedisConnection(redisUrl);
    return new Cluster(Optional.of(redis), NodeBus.over(redis));
  }

  @Override
  public void close() {
    redis.ifPresent(RedisConnection::close);
  }
}
