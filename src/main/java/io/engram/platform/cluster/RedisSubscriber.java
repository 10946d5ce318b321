package io.engram.platform.cluster;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The node's subscription to Engram's channels: one connection of its own, held by one thread,
 * subscribed to the pattern {@code engram:*} (so a listener added at any time is served at once,
 * with no subscription to add), and subscribed again after each break, backing off to at most a
 * second. Messages sent while it was away are lost: what they announce is also found by each
 * node's periodic look (the change log every second, credential caches within two).
 */
final class RedisSubscriber implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RedisSubscriber.class);
  static final String PATTERN = "engram:*";
  private static final long MAX_BACKOFF_MILLIS = 1_000;

  private final HostAndPort address;
  private final JedisClientConfig config;
  private final Map<String, Consumer<String>> listeners = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile Jedis connection;
  private volatile boolean closed;

  RedisSubscriber(HostAndPort address, JedisClientConfig config) {
    this.address = address;
    this.config = config;
    this.thread = Thread.ofPlatform().daemon().name("redis-subscriber").start(this::run);
  }

  void listen(String channel, Consumer<String> listener) {
    if (!channel.startsWith(PATTERN.substring(0, PATTERN.length() - 1))) {
      throw new IllegalArgumentException("channels are named engram:...: " + channel);
    }
    listeners.put(channel, listener);
  }

  /** Drops the subscription's connection, which the thread then makes again. */
  void reconnect() {
    Jedis live = connection;
    if (live != null) {
      live.disconnect();
    }
  }

  private void run() {
    long backoff = 50;
    while (!closed) {
      Subscription subscription = new Subscription();
      try (Jedis jedis = new Jedis(address, config)) {
        connection = jedis;
        if (closed) {
          return;
        }
        jedis.psubscribe(subscription, PATTERN);
      } catch (JedisException e) {
        LOG.debug("Redis subscription broken; subscribing again", e);
      } finally {
        connection = null;
      }
      if (subscription.started) {
        backoff = 50;
      }
      if (!closed) {
        pause(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Delivers each message to its channel's listener, on the subscription's thread. */
  private final class Subscription extends JedisPubSub {
    private volatile boolean started;

    @Override
    public void onPSubscribe(String pattern, int subscribedChannels) {
      started = true;
    }

    @Override
    public void onPMessage(String pattern, String channel, String message) {
      Consumer<String> listener = listeners.get(channel);
      if (listener == null) {
        return;
      }
      try {
        listener.accept(message);
      } catch (RuntimeException e) {
        LOG.warn("a listener of {} failed on a message", channel, e);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    reconnect();
    thread.interrupt();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
