package io.engram.inference.usage;

import io.engram.organizations.Organization;
import io.engram.organizations.Tier;
import io.engram.platform.crypto.SecretBox;
import io.engram.store.Database;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every model request of every organization, kept for its plan's retention. A request never waits
 * on it: {@link #add} puts the record on a queue (bounded: past {@link #MAX_PENDING} records a
 * record is dropped and counted, {@code engram_request_log_dropped_total}), written in batches
 * every second ({@link #flush}) and at shutdown; a batch the database refused stays queued.
 */
public final class RequestLog {
  private static final Logger LOG = LoggerFactory.getLogger(RequestLog.class);
  static final int MAX_PENDING = 100_000;
  private static final int BATCH = 2_000;

  private final RequestLogStore store;
  private final Clock clock;
  private final ConcurrentLinkedQueue<RequestRecord> pending = new ConcurrentLinkedQueue<>();
  private final AtomicInteger queued = new AtomicInteger();
  private final Counter dropped;

  public RequestLog(Database database, SecretBox secrets, MeterRegistry registry, Clock clock) {
    this.store = new RequestLogStore(database, secrets);
    this.clock = clock;
    this.dropped = Counter.builder("engram_request_log_dropped_total")
        .description("Request records dropped because the log's queue was full (the database slow"
            + " or away for long)")
        .register(registry);
    Gauge.builder("engram_request_log_queued", queued, AtomicInteger::get)
        .description("Request records waiting to be written")
        .register(registry);
  }

  /** How long an organization's requests are kept: by plan (docs/inference.md, the request log). */
  public static Duration retention(Tier tier) {
    if (tier.atLeast(Tier.GROW)) {
      return Duration.ofDays(90);
    }
    return tier.atLeast(Tier.SEED) ? Duration.ofDays(30) : Duration.ofDays(7);
  }

  /** Now, by the server's clock: when a request's record says it started. */
  public long now() {
    return clock.millis();
  }

  /** Queues the request's record; never blocks, never fails the request. */
  public void add(RequestRecord record) {
    if (queued.incrementAndGet() > MAX_PENDING) {
      queued.decrementAndGet();
      dropped.increment();
      return;
    }
    pending.add(record);
  }

  /**
   * Removes the logged messages and answers of an organization's end user (null: none) and of the
   * requests whose prompt held one of {@code memoryIds} (an erasure); how many records.
   */
  public long forget(String orgId, String endUser, java.util.Set<String> memoryIds) {
    return store.forget(orgId, endUser, memoryIds);
  }

  /** Writes what is queued, in batches; what the database refuses waits for the next flush. */
  public synchronized void flush() {
    while (!pending.isEmpty()) {
      List<RequestRecord> batch = new ArrayList<>();
      RequestRecord next;
      while (batch.size() < BATCH && (next = pending.poll()) != null) {
        batch.add(next);
      }
      try {
        store.insert(batch);
        queued.addAndGet(-batch.size());
      } catch (RuntimeException e) {
        LOG.warn(
            "could not write {} request records; keeping them: {}", batch.size(), e.toString());
        pending.addAll(batch);
        return;
      }
    }
  }

  /** The organization's request, with its contents when they were kept; written ones only. */
  Optional<RequestRecord> find(String orgId, String id) {
    flush();
    return store.find(orgId, id);
  }

  List<RequestRecord> list(String orgId, RequestLogStore.Filter filter, String after, int limit) {
    flush();
    return store.list(orgId, filter, after, limit);
  }

  /**
   * Deletes what each organization no longer keeps: older than its plan's retention, or than
   * {@code shortened} says when that is sooner (its retention policies); how many requests went.
   */
  public int purge(
      Function<String, Optional<Organization>> organizations,
      Function<String, Optional<Duration>> shortened) {
    int purged = 0;
    for (String orgId : store.organizations()) {
      Duration kept =
          organizations.apply(orgId).map(org -> retention(org.plan().tier())).orElse(Duration.ZERO);
      Duration policy = shortened.apply(orgId).orElse(kept);
      if (policy.compareTo(kept) < 0) {
        kept = policy;
      }
      purged += store.purge(orgId, clock.millis() - kept.toMillis());
    }
    return purged;
  }
}
