package io.engram.platform.cluster;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What this node shares with the others beyond the database: nothing (no {@code REDIS_URL}), or a
 * Redis connection that carries the shared limits and the change messages ({@link NodeBus}).
 * What is built on it is closed with it.
 */
public final class Cluster implements AutoCloseable {
  private final Optional<RedisConnection> redis;
  private final NodeBus bus;
  private final List<AutoCloseable> parts = new CopyOnWriteArrayList<>();

  private Cluster(Optional<RedisConnection> redis, NodeBus bus) {
    this.redis = redis;
    this.bus = bus;
  }

  public static Cluster open(String redisUrl) {
    if (redisUrl == null || redisUrl.isEmpty()) {
      return new Cluster(Optional.empty(), NodeBus.LOCAL);
    }
    RedisConnection redis = new RedisConnection(redisUrl);
    return new Cluster(Optional.of(redis), NodeBus.over(redis));
  }

  public Optional<RedisConnection> redis() {
    return redis;
  }

  public NodeBus bus() {
    return bus;
  }

  /** Something built on the connection, closed before it. */
  public <T extends AutoCloseable> T keep(T part) {
    parts.add(part);
    return part;
  }

  @Override
  public void close() {
    for (AutoCloseable part : parts) {
      try {
        part.close();
      } catch (Exception e) {
        // closing: nothing left to do with it
      }
    }
    redis.ifPresent(RedisConnection::close);
  }
}
