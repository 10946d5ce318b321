package io.engram.finetuning;

import io.engram.finetuning.trainer.LoraTrainer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** What operators watch of fine-tuning: jobs by outcome, steps, tokens, the throughput now. */
final class FineTuningMetrics {
  private final MeterRegistry registry;
  private final Counter steps;
  private final Counter tokens;
  private final AtomicLong tokensPerSecond = new AtomicLong();
  final AtomicInteger running = new AtomicInteger();

  FineTuningMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.steps = Counter.builder("engram_fine_tuning_steps")
        .description("Optimizer steps taken by fine-tuning jobs on this node")
        .register(registry);
    this.tokens = Counter.builder("engram_fine_tuning_trained_tokens")
        .description("Tokens the loss counted, over every fine-tuning step on this node")
        .register(registry);
    Gauge.builder("engram_fine_tuning_tokens_per_second", tokensPerSecond, AtomicLong::get)
        .description("Training throughput of the last step on this node")
        .register(registry);
    Gauge.builder("engram_fine_tuning_jobs_running", running, AtomicInteger::get)
        .description("Fine-tuning jobs training on this node now")
        .register(registry);
  }

  void step(LoraTrainer.StepReport report) {
    steps.increment();
    tokensPerSecond.set(Math.round(report.tokensPerSecond()));
  }

  void tokens(long count) {
    tokens.increment(count);
  }

  void finished(String status) {
    Counter.builder("engram_fine_tuning_jobs_finished")
        .description("Fine-tuning jobs that ended on this node, by status")
        .tag("status", status)
        .register(registry)
        .increment();
  }
}
