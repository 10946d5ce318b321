package io.engram.platform.cluster;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
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

  /**
   * {@code engram_redis_available}: 1 while Redis answers, 0 while each node counts its limits on
   * its own; {@code engram_redis_unavailable_seconds}: for how long (0 while it answers); {@code
   * engram_redis_command_seconds}: the commands waited for. Only with {@code REDIS_URL}; registered
   * once per registry.
   */
  public void registerMetrics(MeterRegistry registry) {
    redis.ifPresent(connection -> {
      Gauge.builder("engram_redis_available", () -> connection.available() ? 1 : 0)
          .description("1 while Redis answers; 0 while this node counts limits on its own")
          .register(registry);
      Gauge.builder("engram_redis_unavailable_seconds", connection::unavailableSeconds)
          .description("Seconds since Redis stopped answering; 0 while it answers")
          .register(registry);
      connection.measureWith(registry);
    });
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
