package io.engram.platform.module;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JobSchedulerTest {

  /** A module of the given jobs. */
  private record Jobs(List<Job> jobs) implements Module {
    @Override
    public String name() {
      return "test";
    }
  }

  @Test
  void aJobThatWaitsDelaysNoOtherJob() throws Exception {
    CountDownLatch released = new CountDownLatch(1);
    CountDownLatch slowStarted = new CountDownLatch(1);
    AtomicInteger slowRuns = new AtomicInteger();
    AtomicInteger quickRuns = new AtomicInteger();
    CountDownLatch quickRanThrice = new CountDownLatch(3);
    try (JobScheduler scheduler = new JobScheduler(new SimpleMeterRegistry())) {
      // Declared first and due first: on one shared thread it would hold every later job.
      scheduler.schedule(new Jobs(List.of(
          new Job("wait on a webhook", Duration.ZERO, Duration.ofMillis(20), () -> {
            slowRuns.incrementAndGet();
            slowStarted.countDown();
            await(released);
          }),
          new Job("write spend", Duration.ofMillis(50), Duration.ofMillis(20), () -> {
            quickRuns.incrementAndGet();
            quickRanThrice.countDown();
          }))));
      assertThat(slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(quickRanThrice.await(10, TimeUnit.SECONDS))
          .as("the quick job ran while the slow one waited")
          .isTrue();
      // A job never overlaps itself: the waiting job is still in its first run.
      assertThat(slowRuns.get()).isEqualTo(1);
      released.countDown();
    }
    assertThat(quickRuns.get()).isGreaterThanOrEqualTo(3);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
