package io.engram.finetuning;

import io.engram.organizations.Organization;
import io.engram.platform.module.Job;
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
 * Runs fine-tuning jobs on this node, {@code FINE_TUNING_JOBS_PER_NODE} at a time (1 by
 * default), each under a lease renewed while it trains. A node that stops (kill -9 included)
 * loses its jobs when the lease lapses; the node that takes one resumes it from its newest
 * checkpoint. On SQLite, the only node frees its leases at start and resumes at once.
 */
final class FineTuningRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FineTuningRunner.class);

  private final FineTuning context;
  private final Function<String, Organization> organizations;
  private final Duration lease;
  /** The database's clock for leases: the one their expiry is compared with. */
  private final java.time.Clock clock;

  private static final Duration STOP_WAIT = Duration.ofSeconds(5);
  private final String node = "node-" + UUID.randomUUID();
  private final java.util.Set<Thread> running = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private final Semaphore slots;
  private final Semaphore wake = new Semaphore(0);
  /** The jobs running here, each with whether its lease was lost to another node. */
  private final Map<String, AtomicBoolean> leased = new ConcurrentHashMap<>();

  private volatile boolean closed;
  private Thread dispatcher;

  FineTuningRunner(
      FineTuning context,
      Function<String, Organization> organizations,
      int jobsPerNode,
      Duration lease,
      java.time.Clock clock) {
    this.context = context;
    this.organizations = organizations;
    this.slots = new Semaphore(jobsPerNode);
    this.lease = lease;
    this.clock = clock;
  }

  synchronized void start(boolean soleNode) {
    if (soleNode) {
      int resumed = context.jobs().releaseAll();
      if (resumed > 0) {
        LOG.info("resuming {} fine-tuning jobs a stop interrupted", resumed);
      }
    }
    dispatcher = Thread.ofPlatform().name("fine-tuning").daemon(true).start(() -> {
      while (!closed) {
        try {
          slots.acquire();
          Optional<String> claimed = context.jobs().claim(node, clock.millis() + lease.toMillis());
          if (claimed.isEmpty()) {
            slots.release();
            wake.tryAcquire(1, TimeUnit.SECONDS);
            continue;
          }
          String id = claimed.get();
          Thread worker = Thread.ofPlatform()
              .name("fine-tuning-" + id)
              .daemon(true)
              .unstarted(() -> {
                try {
                  run(id);
                } finally {
                  running.remove(Thread.currentThread());
                  slots.release();
                }
              });
          running.add(worker);
          worker.start();
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          LOG.warn("fine-tuning dispatcher: {}", e.toString());
        }
      }
    });
  }

  /**
   * Renews the lease of every job training here, three times a lease: one that another node took
   * over meanwhile is told so, and stops at its next step.
   */
  Job leaseRenewal() {
    return Job.every(
        lease.dividedBy(3),
        "renew the leases of the fine-tuning jobs running here",
        () -> leased.forEach((id, lost) -> {
          try {
            if (!context.jobs().renew(id, node, clock.millis() + lease.toMillis())) {
              lost.set(true);
            }
          } catch (RuntimeException e) {
            LOG.warn("fine-tuning job {}: lease not renewed: {}", id, e.toString());
          }
        }));
  }

  /** A job was created: look for it now rather than at the next poll. */
  void wake() {
    wake.release();
  }

  private void run(String id) {
    FineTuningJob job = context.jobs().byId(id);
    AtomicBoolean lost = new AtomicBoolean();
    leased.put(id, lost);
    context.metrics().running.incrementAndGet();
    try {
      Organization org = organizations.apply(job.orgId());
      LOG.info(
          "fine-tuning job {} of organization {} on base model {}: {}",
          id,
          job.orgId(),
          job.model(),
          job.status());
      LocalTrainingRun.Result result = job.trainer().equals(FineTuningJob.UPSTREAM)
          ? new UpstreamTrainingRun(
                  context,
                  job,
                  org,
                  () -> closed || lost.get(),
                  () -> context.jobs().cancelRequested(id))
              .run()
          : new LocalTrainingRun(
                  context,
                  job,
                  org,
                  () -> closed || lost.get() || context.jobs().cancelRequested(id))
              .run();
      context.metrics().tokens(result.trainedTokens());
      if (result.finished()) {
        context.jobs().succeed(id, result.fineTunedModel(), result.trainedTokens());
        context
            .jobs()
            .message(id, "The job has successfully completed: " + result.fineTunedModel());
        context.metrics().finished(FineTuningJob.SUCCEEDED);
        LOG.info("fine-tuning job {} succeeded: {}", id, result.fineTunedModel());
      } else if (!closed && !lost.get()) {
        context.jobs().cancelled(id, result.trainedTokens());
        context.metrics().finished(FineTuningJob.CANCELLED);
        LOG.info("fine-tuning job {} cancelled", id);
      }
    } catch (io.engram.finetuning.trainer.LoraTrainer.DivergedException e) {
      context.jobs().fail(id, "training_diverged", e.getMessage(), "hyperparameters.learning_rate");
      context.metrics().finished(FineTuningJob.FAILED);
    } catch (LocalTrainingRun.JobFailure e) {
      context.jobs().fail(id, e.code, e.getMessage(), e.param);
      context.metrics().finished(FineTuningJob.FAILED);
    } catch (Exception | OutOfMemoryError e) {
      LOG.error("fine-tuning job {} failed", id, e);
      context.jobs().fail(id, "training_failed", "Training failed: " + e, null);
      context.metrics().finished(FineTuningJob.FAILED);
    } finally {
      leased.remove(id);
      context.metrics().running.decrementAndGet();
      if (closed && !lost.get()) {
        // a graceful stop: another node (or this one's next start) takes the job at once
        context.jobs().release(id, node);
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    if (dispatcher != null) {
      dispatcher.interrupt();
    }
    // jobs stop at their next step and free their lease; a long step is not waited for past this
    long deadline = System.nanoTime() + STOP_WAIT.toNanos();
    for (Thread worker : running) {
      try {
        worker.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
  }
}
