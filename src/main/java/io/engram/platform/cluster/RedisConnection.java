package io.engram.platform.cluster;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.JedisURIHelper;

/**
 * The node's connection to Redis ({@code REDIS_URL}): a pool of blocking connections, each command
 * written and read on the caller's own (virtual) thread. That is what keeps a limit check cheap: a
 * client that hands each command to an event loop and back (Lettuce, used before) cost a request's
 * virtual thread p50 241 µs per command here, a blocking one 37 µs (docs/decisions.md).
 *
 * <p>A Redis that is away costs a request nothing but a fast failure: commands time out after
 * {@link #COMMAND_TIMEOUT}; once one fails, requests do not try again for {@link #RETRY_SPACING}
 * (one request tries then, and a probe every second does without traffic), so a Redis that stopped
 * answering is not waited for by every request in turn; and it is noticed back within a second.
 */
public final class RedisConnection implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RedisConnection.class);
  static final Duration COMMAND_TIMEOUT = Duration.ofMillis(250);

  /** While Redis is away, at most one request a quarter-second finds out whether it is back. */
  static final Duration RETRY_SPACING = Duration.ofMillis(250);

  /** How often availability is checked without traffic, which bounds noticing Redis back. */
  static final Duration PROBE_EVERY = Duration.ofSeconds(1);

  private final RedisClient client;
  private final RedisSubscriber subscriber;
  private final ScheduledExecutorService probe = Executors.newSingleThreadScheduledExecutor(
      Thread.ofPlatform().daemon().name("redis-probe").factory());
  /** Messages published, which nobody waits for. */
  private final ExecutorService unwaited = Executors.newThreadPerTaskExecutor(
      Thread.ofVirtual().name("redis-send-", 0).factory());

  private final AtomicBoolean available = new AtomicBoolean(true);
  private final AtomicLong unavailableSince = new AtomicLong();
  private final AtomicLong nextTry = new AtomicLong();
  private final AtomicBoolean greeted = new AtomicBoolean();
  /** How long each command this node waits for takes, once the node's metrics exist. */
  private volatile Timer commandTimes;

  private final HostAndPort address;

  public RedisConnection(String url) {
    URI uri = URI.create(url);
    if (!JedisURIHelper.isValid(uri)) {
      throw new IllegalArgumentException(
          "REDIS_URL must look like redis://[user:password@]host:port[/db] or rediss://...");
    }
    this.address = JedisURIHelper.getHostAndPort(uri);
    JedisClientConfig config = DefaultJedisClientConfig.builder()
        .user(JedisURIHelper.getUser(uri))
        .password(JedisURIHelper.getPassword(uri))
        .database(JedisURIHelper.getDBIndex(uri))
        .ssl(JedisURIHelper.isRedisSSLScheme(uri))
        .connectionTimeoutMillis((int) COMMAND_TIMEOUT.toMillis())
        .socketTimeoutMillis((int) COMMAND_TIMEOUT.toMillis())
        .clientName("engram")
        // RESP2, which every Redis since 2.6 speaks and whose answers the scripts are read as
        // (a Lua table is a list of numbers); said outright, so no negotiation is attempted.
        .protocol(RedisProtocol.RESP2)
        .build();
    GenericObjectPoolConfig<Connection> pool = new GenericObjectPoolConfig<>();
    // Each command holds a connection for a round trip (tens of microseconds), so a few dozen
    // carry thousands of requests a second; a request waits for one at most a command's timeout.
    pool.setMaxTotal(64);
    pool.setMaxIdle(64);
    pool.setMaxWait(COMMAND_TIMEOUT);
    pool.setJmxEnabled(false);
    this.client = RedisClient.builder()
        .hostAndPort(address)
        .clientConfig(config)
        .poolConfig(pool)
        .build();
    this.subscriber = new RedisSubscriber(address, config);
    probe.scheduleWithFixedDelay(this::probe, 0, PROBE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Runs a command and waits for its answer, on the caller's thread; a {@link
   * RedisUnavailableException} when Redis does not answer, or was found away a moment ago.
   */
  public <T> T call(Function<UnifiedJedis, T> command) {
    if (!mayTry()) {
      throw new RedisUnavailableException("Redis was found away less than a moment ago", null);
    }
    return attempt(command);
  }

  /**
   * Sends a message to every node subscribed to the channel, without waiting for Redis: the
   * request that publishes is not held by it. While Redis is away, or once the node is closing,
   * the message is dropped (the other nodes fall back on their periodic looks).
   */
  public void publish(String channel, String message) {
    if (!available.get()) {
      return;
    }
    try {
      unwaited.execute(() -> {
        try {
          call(redis -> redis.publish(channel, message));
        } catch (RedisUnavailableException e) {
          // dropped, as above
        }
      });
    } catch (RejectedExecutionException closing) {
      // the node is shutting down: nothing more is sent
    }
  }

  /**
   * Calls {@code listener} with every message published on {@code channel}, by any node (this one
   * included), from now on; again after a reconnection.
   */
  public void subscribe(String channel, Consumer<String> listener) {
    subscriber.listen(channel, listener);
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

  private <T> T attempt(Function<UnifiedJedis, T> command) {
    return attempt(command, true);
  }

  /** {@code timed}: counted in the histogram of what requests wait for (the probe is not). */
  private <T> T attempt(Function<UnifiedJedis, T> command, boolean timed) {
    long start = System.nanoTime();
    try {
      T answer = command.apply(client);
      answered();
      return answer;
    } catch (JedisException e) {
      failed(e);
      throw new RedisUnavailableException("Redis did not answer: " + e.getMessage(), e);
    } finally {
      Timer times = commandTimes;
      if (times != null && timed) {
        times.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      }
    }
  }

  /**
   * {@code engram_redis_command_seconds}: each command a request (or this node) waits for, from
   * the call to the answer or the failure, as a histogram: what sharing the limits adds to a
   * request is the sum of its commands (a chat makes three).
   */
  void measureWith(MeterRegistry registry) {
    commandTimes = Timer.builder("engram_redis_command_seconds")
        .description("Redis commands waited for, from the call to the answer or the failure")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(10_000))
        .maximumExpectedValue(COMMAND_TIMEOUT)
        .register(registry);
  }

  /** While Redis is away, one caller per {@link #RETRY_SPACING} tries; the others fail at once. */
  private boolean mayTry() {
    if (available.get()) {
      return true;
    }
    long now = System.nanoTime();
    long next = nextTry.get();
    return now - next >= 0 && nextTry.compareAndSet(next, now + RETRY_SPACING.toNanos());
  }

  private void answered() {
    if (available.compareAndSet(false, true)) {
      LOG.info("Redis answers again: limits are shared by every node once more");
      // Its subscription may be on a connection that died without a word: start it anew.
      subscriber.reconnect();
    }
  }

  /** A command could not reach Redis: the transition is logged once, not each failure. */
  private void failed(JedisException e) {
    if (available.compareAndSet(true, false)) {
      unavailableSince.set(System.currentTimeMillis());
      nextTry.set(System.nanoTime() + RETRY_SPACING.toNanos());
      // The pool's idle connections are likely as dead as the one that failed (Redis restarted).
      client.getPool().clear();
      LOG.warn(
          "Redis cannot be reached ({}): each node counts limits on its own until it answers",
          e.getMessage());
    }
  }

  /** Every second: a PING, so availability stays current (and comes back) without traffic. */
  private void probe() {
    try {
      // Not timed: nobody waits for it, and it would blur what a request's commands cost.
      attempt(UnifiedJedis::ping, false);
      if (greeted.compareAndSet(false, true)) {
        LOG.info("connected to Redis at {}", address);
      }
    } catch (RedisUnavailableException e) {
      LOG.debug("Redis probe: not answering", e);
    }
  }

  @Override
  public void close() {
    probe.shutdownNow();
    subscriber.close();
    unwaited.shutdown();
    try {
      unwaited.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    client.close();
  }
}
