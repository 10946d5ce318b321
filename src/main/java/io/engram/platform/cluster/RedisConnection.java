package io.engram.platform.cluster;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's connection to Redis ({@code REDIS_URL}), made so that a Redis that is away costs a
 * request nothing but a fast failure: commands time out after {@link #COMMAND_TIMEOUT}, are
 * refused at once while the connection is down (not queued), and the connection comes back by
 * itself, including when Redis was not there when the node started.
 */
public final class RedisConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RedisConnection.class);
  static final Duration COMMAND_TIMEOUT = Duration.ofMillis(250);

  /** Reconnection attempts back off to at most this, so Redis back is noticed within seconds. */
  static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

  private final RedisClient client;
  private final ClientResources resources;
  private final ScheduledExecutorService retry = Executors.newSingleThreadScheduledExecutor(
      Thread.ofPlatform().daemon().name("redis-connect").factory());
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile StatefulRedisPubSubConnection<String, String> subscriptions;
  private final Map<String, Consumer<String>> listeners = new ConcurrentHashMap<>();
  private final AtomicBoolean available = new AtomicBoolean(true);
  private final AtomicLong unavailableSince = new AtomicLong();

  public RedisConnection(String url) {
    RedisURI uri = RedisURI.create(url);
    uri.setTimeout(COMMAND_TIMEOUT);
    this.resources = DefaultClientResources.builder()
        .reconnectDelay(
            Delay.exponential(Duration.ofMillis(50), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
        .build();
    this.client = RedisClient.create(resources, uri);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(true)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
        .build());
    connect();
    retry.scheduleWithFixedDelay(this::connectIfAbsent, 2, 2, TimeUnit.SECONDS);
  }

  /** The commands of the live connection; a {@link RedisException} when there is none yet. */
  public RedisCommands<String, String> commands() {
    StatefulRedisConnection<String, String> live = connection;
    if (live == null) {
      throw new RedisConnectionException("not connected to Redis");
    }
    return live.sync();
  }

  /**
   * The asynchronous commands of the live connection, for what a request need not wait for (giving
   * back a slot, settling a reservation): sent at once, answered later; a {@link RedisException}
   * when there is no connection.
   */
  public RedisAsyncCommands<String, String> async() {
    StatefulRedisConnection<String, String> live = connection;
    if (live == null) {
      throw new RedisConnectionException("not connected to Redis");
    }
    return live.async();
  }

  /** Sends a message to every node subscribed to the channel, without waiting for Redis. */
  public void publish(String channel, String message) {
    StatefulRedisConnection<String, String> live = connection;
    if (live == null) {
      throw new RedisConnectionException("not connected to Redis");
    }
    live.async().publish(channel, message);
  }

  /**
   * Calls {@code listener} with every message published on {@code channel}, by any node, from now
   * on (and again after a reconnection: Lettuce subscribes anew).
   */
  public void subscribe(String channel, Consumer<String> listener) {
    listeners.put(channel, listener);
    StatefulRedisPubSubConnection<String, String> live = subscriptions;
    if (live != null) {
      live.sync().subscribe(channel);
    }
  }

  /**
   * Whether the last command reached Redis. While it does not, each limit counts on this node
   * (docs/scaling.md); {@code engram_redis_available} and the readiness check show it.
   */
  public boolean available() {
    return available.get();
  }

  /** For how long Redis has not answered, in whole seconds; 0 while it answers. */
  public long unavailableSeconds() {
    return available.get()
        ? 0
        : Math.max(0, (System.currentTimeMillis() - unavailableSince.get()) / 1000);
  }

  /** A command reached Redis. */
  public void answered() {
    if (available.compareAndSet(false, true)) {
      LOG.info("Redis answers again: limits are shared by every node once more");
    }
  }

  /** A command could not reach Redis: the transition is logged once, not each failure. */
  public void failed(RedisException e) {
    if (available.compareAndSet(true, false)) {
      unavailableSince.set(System.currentTimeMillis());
      LOG.warn(
          "Redis cannot be reached ({}): each node counts limits on its own until it answers",
          e.getMessage());
    }
  }

  /** Every 2 seconds: connects if not yet connected, else pings, so availability stays current without traffic. */
  private void connectIfAbsent() {
    if (connection == null || subscriptions == null) {
      connect();
      return;
    }
    try {
      connection.sync().ping();
      answered();
    } catch (RedisException e) {
      failed(e);
    }
  }

  private void connect() {
    try {
      if (connection == null) {
        connection = client.connect();
      }
      if (subscriptions == null) {
        StatefulRedisPubSubConnection<String, String> pubSub = client.connectPubSub();
        pubSub.addListener(new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            Consumer<String> listener = listeners.get(channel);
            if (listener != null) {
              listener.accept(message);
            }
          }
        });
        if (!listeners.isEmpty()) {
          pubSub.sync().subscribe(listeners.keySet().toArray(String[]::new));
        }
        subscriptions = pubSub;
      }
      LOG.info("connected to Redis");
      answered();
    } catch (RedisException e) {
      failed(e);
      LOG.debug("Redis connection not made; retrying every 2 seconds", e);
    }
  }

  @Override
  public void close() {
    retry.shutdownNow();
    StatefulRedisConnection<String, String> live = connection;
    if (live != null) {
      live.close();
    }
    StatefulRedisPubSubConnection<String, String> pubSub = subscriptions;
    if (pubSub != null) {
      pubSub.close();
    }
    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    resources.shutdown(0, 2, TimeUnit.SECONDS);
  }
}
