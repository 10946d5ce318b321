package io.engram.platform.cluster;

import java.util.function.Consumer;

/**
 * Tells the other nodes of a change they must apply at once (a revoked credential, an
 * organization whose plan changed). With {@code REDIS_URL} it is Redis pub/sub; without it there
 * are no other nodes to tell quickly (nodes sharing only PostgreSQL see such changes within their
 * caches' two seconds).
 */
public interface NodeBus {
  /** One node, or nodes without Redis: nothing to publish to. */
  NodeBus LOCAL = new NodeBus() {
    @Override
    public void publish(String channel, String message) {}

    @Override
    public void subscribe(String channel, Consumer<String> listener) {}
  };

  /**
   * Sends to every node subscribed (this one included), without waiting: a request that publishes
   * is never held by Redis. A Redis that is away loses the message.
   */
  void publish(String channel, String message);

  void subscribe(String channel, Consumer<String> listener);

  /** Pub/sub over the node's Redis connection. */
  static NodeBus over(RedisConnection redis) {
    return new NodeBus() {
      @Override
      public void publish(String channel, String message) {
        // Lost when Redis is away: the other nodes fall back on their caches' two seconds.
        redis.publish(channel, message);
      }

      @Override
      public void subscribe(String channel, Consumer<String> listener) {
        redis.subscribe(channel, listener);
      }
    };
  }
}
