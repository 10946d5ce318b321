package io.engram.inference.usage;

import io.engram.inference.engine.Generation;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Inference usage as it happens, persisted per organization, credential, model and hour.
 *
 * <p>A request never waits on a database write: usage is added to in-memory counters and written
 * in one batch every second ({@link #flush()}, from housekeeping and at shutdown). The
 * tokens-per-hour limit reads the organization's hour from the database (every node's usage),
 * refreshed at most every {@link #REFRESH} and kept current in between with this node's own
 * usage, so a limit check costs no query on the hot path.
 */
public final class UsageLedger {
  private static final Logger LOG = LoggerFactory.getLogger(UsageLedger.class);
  static final Duration REFRESH = Duration.ofSeconds(2);
  static final long HOUR_MILLIS = Duration.ofHours(1).toMillis();

  /** One row's key; {@code deployment} is '' for a model that is not routed. */
  private record Key(
      String orgId, String credentialId, String model, String deployment, long hourStart) {}

  private static final class Counts {
    long requests;
    long promptTokens;
    long completionTokens;
    long memoryTokens;
    long errors;
    long costNanos;
    long cacheHits;
  }

  private record LatencyKey(String orgId, String model, long hourStart, int bucket) {}

  /** An organization's tokens in one hour as last read from the database, plus this node's since. */
  private static final class HourTotal {
    final long hourStart;
    final AtomicLong tokens;
    final long refreshedAtNanos = System.nanoTime();

    HourTotal(long hourStart, long tokens) {
      this.hourStart = hourStart;
      this.tokens = new AtomicLong(tokens);
    }
  }

  private final UsageStore store;
  private final Clock clock;
  private final Map<Key, Counts> pending = new ConcurrentHashMap<>();
  private final Map<LatencyKey, Long> pendingLatency = new ConcurrentHashMap<>();
  private final Map<String, HourTotal> hours = new ConcurrentHashMap<>();

  UsageLedger(UsageStore store, Clock clock) {
    this.store = store;
    this.clock = clock;
  }

  /** The ledger over the database's usage table. */
  public static UsageLedger open(Database database, Clock clock) {
    return new UsageLedger(new UsageStore(database), clock);
  }

  static long hourStart(long epochMillis) {
    return epochMillis - Math.floorMod(epochMillis, HOUR_MILLIS);
  }

  long currentHourStart() {
    return hourStart(clock.millis());
  }

  /**
   * Records one finished request: its tokens, and its cost in billionths of a dollar at the
   * model's prices, under the client's model and the deployment that answered ('' when none).
   */
  public void record(
      String orgId,
      String credentialId,
      String model,
      String deployment,
      Generation.Usage usage,
      int memoryTokens,
      long costNanos) {
    long hour = currentHourStart();
    pending.compute(new Key(orgId, credentialId, model, deployment, hour), (key, counts) -> {
      Counts c = counts == null ? new Counts() : counts;
      c.requests++;
      c.promptTokens += usage.promptTokens();
      c.completionTokens += usage.completionTokens();
      c.memoryTokens += memoryTokens;
      c.costNanos += costNanos;
      return c;
    });
    HourTotal total = hours.get(orgId);
    if (total != null && total.hourStart == hour) {
      total.tokens.addAndGet(usage.total());
    }
  }

  /**
   * A request answered from the response cache: counted as a request and a hit, with no token and
   * no cost (the model was not called).
   */
  public void cacheHit(String orgId, String credentialId, String model) {
    pending.compute(new Key(orgId, credentialId, model, "", currentHourStart()), (key, counts) -> {
      Counts c = counts == null ? new Counts() : counts;
      c.requests++;
      c.cacheHits++;
      return c;
    });
  }

  /**
   * How a request that ran a model ended: its duration goes to the model's latency buckets, and a
   * failure counts as an error of the row {@link #record} counted the request in.
   */
  public void finished(
      String orgId,
      String credentialId,
      String model,
      String deployment,
      boolean failed,
      long durationNanos) {
    long hour = currentHourStart();
    int bucket = LatencyBuckets.of(durationNanos / 1e6);
    pendingLatency.merge(new LatencyKey(orgId, model, hour, bucket), 1L, Long::sum);
    if (failed) {
      pending.compute(new Key(orgId, credentialId, model, deployment, hour), (key, counts) -> {
        Counts c = counts == null ? new Counts() : counts;
        c.errors++;
        return c;
      });
    }
  }

  /** Tokens the organization used in the current hour, on every node. */
  public long tokensThisHour(String orgId) {
    long hour = currentHourStart();
    HourTotal total = hours.get(orgId);
    if (total != null
        && total.hourStart == hour
        && System.nanoTime() - total.refreshedAtNanos < REFRESH.toNanos()) {
      return total.tokens.get();
    }
    return refresh(orgId, hour);
  }

  /** Seconds until the current hour ends, when the hourly budget renews. */
  public long secondsToNextHour() {
    long now = clock.millis();
    return Math.max(1, (hourStart(now) + HOUR_MILLIS - now + 999) / 1000);
  }

  private synchronized long refresh(String orgId, long hour) {
    long stored = store.tokensInHour(orgId, hour);
    long unwritten = pending.entrySet().stream()
        .filter(e -> e.getKey().orgId().equals(orgId) && e.getKey().hourStart() == hour)
        .mapToLong(e -> e.getValue().promptTokens + e.getValue().completionTokens)
        .sum();
    hours.put(orgId, new HourTotal(hour, stored + unwritten));
    return stored + unwritten;
  }

  /** Writes what was recorded since the last flush. Synchronized with refresh so nothing is counted twice. */
  public synchronized void flush() {
    flushLatency();
    if (pending.isEmpty()) {
      return;
    }
    List<UsageStore.Row> rows = new ArrayList<>();
    for (Key key : List.copyOf(pending.keySet())) {
      Counts counts = pending.remove(key);
      if (counts != null) {
        rows.add(new UsageStore.Row(
            key.orgId(),
            key.credentialId(),
            key.model(),
            key.deployment(),
            key.hourStart(),
            counts.requests,
            counts.promptTokens,
            counts.completionTokens,
            counts.memoryTokens,
            counts.errors,
            counts.costNanos,
            counts.cacheHits));
      }
    }
    try {
      store.add(rows);
    } catch (RuntimeException e) {
      LOG.warn(
          "could not write inference usage ({} rows); keeping it for the next flush: {}",
          rows.size(),
          e.toString());
      rows.forEach(row -> pending.merge(
          new Key(row.orgId(), row.credentialId(), row.model(), row.deployment(), row.hourStart()),
          counts(row),
          UsageLedger::sum));
    }
  }

  private static Counts counts(UsageStore.Row row) {
    Counts c = new Counts();
    c.requests = row.requests();
    c.promptTokens = row.promptTokens();
    c.completionTokens = row.completionTokens();
    c.memoryTokens = row.memoryTokens();
    c.errors = row.errors();
    c.costNanos = row.costNanos();
    c.cacheHits = row.cacheHits();
    return c;
  }

  private static Counts sum(Counts a, Counts b) {
    a.requests += b.requests;
    a.promptTokens += b.promptTokens;
    a.completionTokens += b.completionTokens;
    a.memoryTokens += b.memoryTokens;
    a.errors += b.errors;
    a.costNanos += b.costNanos;
    a.cacheHits += b.cacheHits;
    return a;
  }

  private void flushLatency() {
    List<UsageStore.LatencyRow> rows = new ArrayList<>();
    for (LatencyKey key : List.copyOf(pendingLatency.keySet())) {
      Long requests = pendingLatency.remove(key);
      if (requests != null) {
        rows.add(new UsageStore.LatencyRow(
            key.orgId(), key.model(), key.hourStart(), key.bucket(), requests));
      }
    }
    try {
      store.addLatency(rows);
    } catch (RuntimeException e) {
      LOG.warn(
          "could not write inference latency ({} rows); keeping it: {}", rows.size(), e.toString());
      rows.forEach(row -> pendingLatency.merge(
          new LatencyKey(row.orgId(), row.model(), row.hourStart(), row.bucket()),
          row.requests(),
          Long::sum));
    }
  }

  /** The organization's usage in [from, to), this node's pending counts included. */
  UsageReport report(String orgId, long from, long to) {
    flush();
    return UsageReport.of(store.rows(orgId, from, to), store.latency(orgId, from, to));
  }
}
