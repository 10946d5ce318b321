package io.engram.platform.ratelimit;

import io.engram.platform.cluster.RedisConnection;
import io.engram.platform.cluster.RedisScript;
import io.engram.platform.cluster.RedisUnavailableException;
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

  /**
   * Lua functions over one key's leases, for this class's script and for scripts that take a slot
   * with more in the same round trip: {@code slot_now()} (Redis's clock, ms), {@code
   * slot_free(key, now, limit)} (drops lapsed leases; whether one more fits), {@code slot_add(key,
   * id, now, lease)}.
   */
  public static final String LUA_FUNCTIONS = """
      local function slot_now()
        local t = redis.call('TIME')
        return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      end
      local function slot_free(key, now, limit)
        redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
        return redis.call('ZCARD', key) < tonumber(limit)
      end
      local function slot_add(key, id, now, lease)
        redis.call('ZADD', key, now + tonumber(lease), id)
        redis.call('PEXPIRE', key, tonumber(lease) * 2)
      end
      """;

  /** KEYS[1] the key, ARGV: slot id, limit, lease ms. Returns 1 when taken. */
  private static final RedisScript TAKE = new RedisScript(LUA_FUNCTIONS + """
      local now = slot_now()
      if not slot_free(KEYS[1], now, ARGV[2]) then return 0 end
      slot_add(KEYS[1], ARGV[1], now, ARGV[3])
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

  /** A slot about to be taken, by this class or by a caller's script that does more at once. */
  public record Claim(String key, String redisKey, String id) {}

  /** A new slot id for {@code key}, and the Redis key its leases are kept under. */
  public Claim claim(String key) {
    return new Claim(key, redisKey(key), node + ":" + sequence.incrementAndGet());
  }

  /**
   * The key in braces is Redis Cluster's hash tag: an organization's keys share a hash slot, so one
   * script may take its slot and reserve its tokens.
   */
  private static String redisKey(String key) {
    return PREFIX + "{" + key + "}";
  }

  /** How long a lease lasts unless renewed, in milliseconds (a script's {@code lease}). */
  public long leaseMillis() {
    return leaseMillis;
  }

  @Override
  public Optional<Slot> take(String key, long limit) {
    Claim claim = claim(key);
    try {
      long taken = TAKE.number(
          redis,
          List.of(claim.redisKey()),
          claim.id(),
          Long.toString(limit),
          Long.toString(leaseMillis));
      if (taken == 0) {
        return Optional.empty();
      }
    } catch (RedisUnavailableException e) {
      LOG.debug("concurrency slots: Redis cannot be reached; counting on this node", e);
      return fallback.take(key, limit);
    }
    return Optional.of(took(claim, () -> giveBack(claim)));
  }

  /**
   * The claim was taken in Redis: its lease is renewed from now until the slot is closed, which
   * runs {@code giveBack} (once) to remove it from Redis.
   */
  public Slot took(Claim claim, Runnable giveBack) {
    held.computeIfAbsent(claim.key(), k -> ConcurrentHashMap.newKeySet()).add(claim.id());
    AtomicBoolean open = new AtomicBoolean(true);
    return () -> {
      if (open.compareAndSet(true, false)) {
        Set<String> mine = held.get(claim.key());
        if (mine != null) {
          mine.remove(claim.id());
        }
        giveBack.run();
      }
    };
  }

  private void giveBack(Claim claim) {
    // Waited for (one short round trip): the caller's next request, which may follow at once,
    // must find the slot free, on any node.
    try {
      redis.call(commands -> commands.zrem(claim.redisKey(), claim.id()));
    } catch (RedisUnavailableException e) {
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
        RENEW.number(redis, List.of(redisKey(key)), arguments.toArray(String[]::new));
      } catch (RedisUnavailableException e) {
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
