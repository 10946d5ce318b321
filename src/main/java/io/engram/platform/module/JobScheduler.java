package io.engram.platform.module;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's one scheduler of background jobs: every module's {@link Job}s run here, so what a
 * node does in the background is one list (logged at start, counted in {@code /metrics} as
 * {@code engram_job_runs_total} and {@code engram_job_duration_seconds} by job and module) and
 * stops in one place.
 */
public final class JobScheduler implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(JobScheduler.class);

  /** A job as scheduled: which module declared it, for the log and the metrics. */
  public record Scheduled(String module, Job job) {}

  private final MeterRegistry registry;
  private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(
      1, Thread.ofVirtual().name("housekeeping-", 0).factory());
  private final List<Scheduled> scheduled = new ArrayList<>();

  public JobScheduler(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Schedules every job the module declares. */
  public synchronized void schedule(Module module) {
    for (Job job : module.jobs()) {
      Runnable run = measured(module.name(), job);
      // One thread per job: a run waits for no other job's (threads are virtual, made as needed).
      executor.setCorePoolSize(scheduled.size() + 1);
      executor.scheduleWithFixedDelay(
          run, job.firstRun().toMillis(), job.period().toMillis(), TimeUnit.MILLISECONDS);
      scheduled.add(new Scheduled(module.name(), job));
      LOG.info("job '{}' of {} runs every {}", job.name(), module.name(), describe(job.period()));
    }
  }

  /** Every job scheduled so far, in the order the modules declared them. */
  public synchronized List<Scheduled> scheduled() {
    return List.copyOf(scheduled);
  }

  private Runnable measured(String module, Job job) {
    Counter succeeded = runs(module, job, "success");
    Counter failed = runs(module, job, "failure");
    Timer duration = Timer.builder("engram_job_duration_seconds")
        .description("How long each run of a background job took")
        .tag("module", module)
        .tag("job", job.name())
        .register(registry);
    return () -> {
      long started = System.nanoTime();
      try {
        job.work().run();
        succeeded.increment();
      } catch (RuntimeException e) {
        failed.increment();
        LOG.warn("could not {}: {}", job.name(), e.toString());
      } finally {
        duration.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
      }
    };
  }

  private Counter runs(String module, Job job, String outcome) {
    return Counter.builder("engram_job_runs_total")
        .description("Runs of each background job, by outcome")
        .tag("module", module)
        .tag("job", job.name())
        .tag("outcome", outcome)
        .register(registry);
  }

  private static String describe(Duration period) {
    return period.toMillis() % 1000 == 0 ? period.toSeconds() + " s" : period.toMillis() + " ms";
  }

  /**
   * Stops the schedule: no run starts again, and a run in progress finishes (up to 10 seconds).
   * No interrupt: a job may be writing to the memory index, and Lucene closes its writer for good
   * when a thread is interrupted during I/O.
   */
  @Override
  public void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("a background job was still running 10 s after shutdown began");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
