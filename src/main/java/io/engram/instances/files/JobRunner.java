package io.engram.instances.files;

import io.engram.objectstores.ObjectStoreException;
import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.module.Job;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs storage jobs on this node, one at a time, under a lease renewed while it works: a node
 * that stops loses its jobs to another when the lease lapses, and takes them back itself at its
 * next start on SQLite (where it is the only node). A store that is down is retried with growing
 * pauses, five tries in all; a refusal (credentials, a missing object, the allowance, a checksum
 * that does not match) fails the job at once.
 */
public final class JobRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobRunner.class);
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration HEARTBEAT = Duration.ofSeconds(5);
  static final int MAX_ATTEMPTS = 5;

  private final StorageJobs jobs;
  private final JobTransfers transfers;
  private final FileStore files;
  private final MeterRegistry registry;
  private final Clock clock;
  private final String node = "node-" + UUID.randomUUID();
  private final Semaphore wake = new Semaphore(0);
  /** The jobs running here, each with whether its lease is still this node's. */
  private final Map<String, AtomicBoolean> leased = new ConcurrentHashMap<>();

  private volatile boolean closed;
  private Thread worker;

  public JobRunner(
      StorageJobs jobs,
      JobTransfers transfers,
      FileStore files,
      MeterRegistry registry,
      Clock clock) {
    this.jobs = jobs;
    this.transfers = transfers;
    this.files = files;
    this.registry = registry;
    this.clock = clock;
  }

  /** Starts the worker; {@code soleNode}: no other node can hold a lease (SQLite). */
  public synchronized void start(Function<String, Organization> organizations, boolean soleNode) {
    if (soleNode) {
      int resumed = jobs.releaseAll();
      if (resumed > 0) {
        LOG.info("resuming {} storage jobs a stop interrupted", resumed);
      }
    }
    worker = Thread.ofPlatform().name("storage-jobs").daemon(true).start(() -> {
      while (!closed) {
        try {
          if (!runOne(organizations)) {
            wake.tryAcquire(2, TimeUnit.SECONDS);
          }
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          LOG.warn("storage job worker: {}", e.toString());
        }
      }
    });
  }

  /**
   * Renews the lease of every job running here (the {@link #HEARTBEAT} job): one that another
   * node took over meanwhile is told it is no longer this node's, and stops at its next item.
   */
  public Job leaseRenewal() {
    return Job.every(
        HEARTBEAT,
        "renew the leases of the storage jobs running here",
        () -> leased.forEach((id, mine) -> {
          try {
            if (!jobs.heartbeat(id, node, clock.millis() + LEASE.toMillis(), -1)) {
              mine.set(false);
            }
          } catch (RuntimeException e) {
            LOG.warn("could not renew the lease of job {}: {}", id, e.toString());
          }
        }));
  }

  /** A job was asked for: look now rather than at the next poll. */
  public void nudge() {
    wake.release();
  }

  /** Claims and runs one job; false when none was waiting. */
  boolean runOne(Function<String, Organization> organizations) {
    Optional<String> claimed = jobs.claim(node, clock.millis() + LEASE.toMillis());
    if (claimed.isEmpty()) {
      return false;
    }
    StorageJob job = jobs.get(claimed.get());
    // Written by the lease thread, read by this one.
    AtomicBoolean mine = new AtomicBoolean(true);
    leased.put(job.id(), mine);
    try {
      run(organizations, job, mine);
    } finally {
      leased.remove(job.id());
      if (jobs.get(job.id()).finished()) {
        FileStore.deleteTree(files.jobDir(job.instanceId(), job.id()));
      }
    }
    return true;
  }

  private void run(
      Function<String, Organization> organizations, StorageJob job, AtomicBoolean mine) {
    try {
      // Inside the try: an organization deleted since fails its job instead of holding it.
      Organization org = organizations.apply(job.orgId());
      for (StorageJobs.Item item : jobs.items(job.id())) {
        if (item.done()) {
          continue;
        }
        long before = jobs.get(job.id()).bytesDone();
        JobTransfers.Carried carried = transfers.carry(
            org,
            job,
            item,
            jobs,
            reached -> mine.get()
                && !closed
                && jobs.heartbeat(
                    job.id(), node, clock.millis() + LEASE.toMillis(), before + reached));
        if (!mine.get() || closed) {
          throw new JobTransfers.Stopped();
        }
        jobs.itemDone(job.id(), item, carried.bytes(), carried.sha256());
        transferred(job.kind(), carried.bytes());
      }
      end(job, "succeeded", null, null);
    } catch (JobTransfers.Stopped stopped) {
      LOG.info(
          "storage job {} stopped on this node (cancelled, taken over or shutting down)", job.id());
    } catch (JobTransfers.Failure e) {
      end(job, "failed", e.code, e.getMessage());
    } catch (ApiException e) {
      end(job, "failed", e.code(), e.getMessage());
    } catch (ObjectStoreException e) {
      switch (e.kind()) {
        case DENIED -> end(job, "failed", "object_store_denied", e.getMessage());
        case NOT_FOUND -> end(job, "failed", "object_not_found", e.getMessage());
        case UNREACHABLE, FAILED -> retry(job, e);
      }
    } catch (IOException | UncheckedIOException e) {
      retry(job, e);
    } catch (RuntimeException e) {
      // An SDK's own exception from inside a stream, or a fault of ours: tried again, bounded,
      // and the job ends failed with the reason rather than held until its lease lapses.
      retry(job, e);
    }
  }

  /** A passing failure: tried again after 2, 4, 8, 16 seconds, then the job fails. */
  private void retry(StorageJob job, Exception e) {
    int attempts = jobs.get(job.id()).attempts();
    if (attempts >= MAX_ATTEMPTS) {
      end(
          job,
          "failed",
          "object_store_unreachable",
          e.getMessage() + " (after " + attempts + " tries)");
      return;
    }
    long pause = Duration.ofSeconds(1L << Math.min(attempts, 6)).toMillis();
    LOG.warn("storage job {} will be tried again in {} ms: {}", job.id(), pause, e.toString());
    jobs.retryLater(job.id(), node, clock.millis() + pause, e.toString());
  }

  private void end(StorageJob job, String status, String code, String message) {
    if (jobs.finish(job.id(), node, status, code, message)) {
      Counter.builder("engram.storage.jobs")
          .description("Storage jobs (import, export, copy) ended, by outcome")
          .tag("kind", job.kind().wireName())
          .tag("outcome", status)
          .register(registry)
          .increment();
      LOG.info(
          "storage job {} ({}) {}{}",
          job.id(),
          job.kind().wireName(),
          status,
          code == null ? "" : ": " + code);
    }
  }

  private void transferred(StorageJob.Kind kind, long bytes) {
    Counter.builder("engram.storage.transferred.bytes")
        .description("Bytes of instance files uploaded and downloaded")
        .tag("direction", kind.wireName())
        .register(registry)
        .increment(bytes);
  }

  @Override
  public void close() {
    closed = true;
    wake.release();
    Thread running = worker;
    if (running != null) {
      try {
        running.join(Duration.ofSeconds(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
