package io.engram.platform.ratelimit;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Concurrency slots shared by every node through Redis, on leases: each key is a sorted set of
 * the slots held, scored by when each lease ends. Taking a slot (one Lua round trip) drops the
 * lapsed leases, counts the rest and adds one if there is room; giving it back removes it. The
 * node renews the leases of the slots it holds every third of {@code lease}, so a node that dies
 * holding slots loses them within {@code lease}, never forever. Times are Redis's own clock.
 *
 * <p>While Redis cannot be reached, slots are counted on this node ({@code fallback}): each node
 * then admits up to the limit on its own. A slot taken that way is given back that way.
 */
public final class RedisSlots implements ConcurrencySlots, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RedisSlots.class);
  private static final String PREFIX = "engram:slots:";
  /** KEYS[1] the key, ARGV: slot id, limit, lease ms. Returns 1 when taken. */
  private static final RedisScript TAKE = new RedisScript("""
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
      if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
      redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
      return 1
      """);
  /** KEYS[1] the key, ARGV[1] lease ms, ARGV[2..] the slots to renew (those still held). */
  private static final RedisScript RENEW = new RedisScript("""
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      for i = 2, #ARGV do
        redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
      end
      redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) * 2)
      return 1
      """);

  private final RedisConnection redis;
  private final ConcurrencySlots fallback;
  private final long leaseMillis;
  private final String node = UUID.randomUUID().toString();
  private final AtomicLong sequence = new AtomicLong();
  /** The slots this node holds in Redis: key → slot ids. */
  private final Map<String, Set<String>> held = new ConcurrentHashMap<>();

  private final ScheduledExecutorService renewals = Executors.newSingleThreadScheduledExecutor(
      Thread.ofPlatform().daemon().name("slot-leases").factory());

  public RedisSlots(RedisConnection redis, ConcurrencySlots fallback, Duration lease) {
    this.redis = redis;
    this.fallback = fallback;
    this.leaseMillis = lease.toMillis();
    long every = Math.max(100, leaseMillis / 3);
    renewals.scheduleWithFixedDelay(this::renew, every, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public Optional<Slot> take(String key, long limit) {
    String redisKey = PREFIX + key;
    String id = node + ":" + sequence.incrementAndGet();
    try {
      Long taken = TAKE.run(
          redis,
          ScriptOutputType.INTEGER,
          new String[] {redisKey},
          id,
          Long.toString(limit),
          Long.toString(leaseMillis));
      if (taken == 0) {
        return Optional.empty();
      }
    } catch (RedisException e) {
      LOG.debug("concurrency slots: Redis cannot be reached; counting on this node", e);
      return fallback.take(key, limit);
    }
    held.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(id);
    AtomicBoolean open = new AtomicBoolean(true);
    return Optional.of(() -> {
      if (open.compareAndSet(true, false)) {
        release(key, redisKey, id);
      }
    });
  }

  private void release(String key, String redisKey, String id) {
    Set<String> mine = held.get(key);
    if (mine != null) {
      mine.remove(id);
    }
    try {
      // Not waited for: the request's answer is not held by giving its slot back.
      redis.async().zrem(redisKey, id);
    } catch (RedisException e) {
      // its lease lapses by itself: no renewal will keep it
    }
  }

  @Override
  public int heldHere(String key) {
    Set<String> mine = held.get(key);
    return (mine == null ? 0 : mine.size()) + fallback.heldHere(key);
  }

  /** Renews the leases of the slots this node holds. */
  private void renew() {
    held.forEach((key, ids) -> {
      if (ids.isEmpty()) {
        return;
      }
      List<String> arguments = new ArrayList<>(List.of(Long.toString(leaseMillis)));
      arguments.addAll(ids);
      try {
        RENEW.run(
            redis,
            ScriptOutputType.INTEGER,
            new String[] {PREFIX + key},
            arguments.toArray(String[]::new));
      } catch (RedisException e) {
        LOG.debug("concurrency slots: leases not renewed this time", e);
      }
    });
  }

  /** Stops renewing: this node's slots lapse within the lease (a test's stand-in for a crash). */
  @Override
  public void close() {
    renewals.shutdownNow();
  }
}
