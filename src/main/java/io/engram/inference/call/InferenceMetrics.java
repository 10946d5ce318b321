package io.engram.inference.call;

import io.engram.inference.engine.Generation;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What operators watch on the gateway, in /metrics: generations by model and outcome, their
 * duration and time to first token, and tokens by kind (memory tokens are part of prompt tokens).
 */
public final class InferenceMetrics {
  private final MeterRegistry registry;
  private final AtomicInteger inFlight = new AtomicInteger();

  public InferenceMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("engram_inference_generations_in_flight", inFlight, AtomicInteger::get)
        .description(
            "Generations running on an engine now (a leak shows as a floor that never returns to 0)")
        .register(registry);
  }

  /** A generation starts running on its engine; {@link #ended()} follows however it ends. */
  void started() {
    inFlight.incrementAndGet();
  }

  void ended() {
    inFlight.decrementAndGet();
  }

  public int inFlight() {
    return inFlight.get();
  }

  /** {@code outcome}: completed, client_gone, or the failure's error code (upstream_timeout...). */
  void generation(String model, String outcome, long durationNanos) {
    Timer.builder("engram_inference_generation_seconds")
        .description("Generations, from the engine call to its end, by model and outcome")
        .tag("model", model)
        .tag("outcome", outcome)
        .publishPercentileHistogram()
        .register(registry)
        .record(Duration.ofNanos(durationNanos));
  }

  /** The response cache's answer to a request: hit, miss, stored, or too_large (not kept). */
  void cache(String outcome) {
    Counter.builder("engram_inference_cache_total")
        .description("The response cache: requests answered from it (hit) or not (miss), answers"
            + " kept (stored) and answers too large to keep (too_large)")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }

  void firstToken(String model, long nanos) {
    Timer.builder("engram_inference_time_to_first_token_seconds")
        .description("From the engine call to the first piece of text")
        .tag("model", model)
        .publishPercentileHistogram()
        .register(registry)
        .record(Duration.ofNanos(nanos));
  }

  void tokens(String model, Generation.Usage usage, int memoryTokens) {
    counter(model, "prompt").increment(usage.promptTokens());
    counter(model, "completion").increment(usage.completionTokens());
    counter(model, "memory").increment(memoryTokens);
  }

  private Counter counter(String model, String kind) {
    return Counter.builder("engram_inference_tokens_total")
        .description(
            "Tokens by model and kind (memory tokens are counted inside prompt tokens too)")
        .tag("model", model)
        .tag("kind", kind)
        .register(registry);
  }
}
