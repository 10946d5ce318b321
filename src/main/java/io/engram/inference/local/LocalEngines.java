package io.engram.inference.local;

import io.engram.platform.config.EngramConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The node's in-process engine capacity from the server's settings, with its metrics. */
public final class LocalEngines {
  private static final Logger LOG = LoggerFactory.getLogger(LocalEngines.class);

  private LocalEngines() {}

  public static LocalCapacity capacity(EngramConfig.Inference inference, MeterRegistry registry) {
    EngramConfig.LocalEngineSettings local = inference.local();
    LocalCapacity capacity = new LocalCapacity(new LocalCapacity.Settings(
        inference.workerProcesses().orElse(Runtime.getRuntime().availableProcessors()),
        local.kvCacheGb().isPresent()
            ? OptionalLong.of((long) local.kvCacheGb().getAsInt() << 30)
            : OptionalLong.empty(),
        local.memoryFraction(),
        local.batchSize().orElse(LocalCapacity.Settings.DEFAULT_PROMPT_BATCH),
        local.flashAttention(),
        local.quantization()));
    LOG.info(
        "in-process engine: {} worker(s) per model, weights {}, KV cache {} MiB ({}), prompt {} "
            + "token(s) per forward pass",
        capacity.settings().workersPerModel(),
        local.quantization(),
        capacity.kvCapacity() >> 20,
        local.kvCacheGb().isPresent()
            ? "KV_CACHE_SIZE_GB"
            : "GPU_MEMORY_FRACTION=" + local.memoryFraction() + " of the JVM's native memory",
        capacity.settings().tokensPerPass());
    state(registry, "engram_local_generations", "running", capacity, LocalCapacity::running);
    state(registry, "engram_local_generations", "waiting", capacity, LocalCapacity::waiting);
    state(registry, "engram_local_kv_cache_bytes", "reserved", capacity, LocalCapacity::kvReserved);
    state(registry, "engram_local_kv_cache_bytes", "capacity", capacity, LocalCapacity::kvCapacity);
    Gauge.builder(
            "engram_local_weights_native_bytes",
            capacity,
            c -> c.weights().values().stream().mapToLong(Long::longValue).sum())
        .tag("quantization", local.quantization())
        .description("Native memory the loaded models' weights took at load (quantized copies)")
        .register(registry);
    FunctionCounter.builder(
            "engram_local_prompt_passes_total", capacity, LocalCapacity::promptPasses)
        .description("Forward passes the in-process engine spent reading prompts")
        .register(registry);
    FunctionCounter.builder("engram_local_kv_refusals_total", capacity, LocalCapacity::refusals)
        .description("Requests refused because their KV cache alone passed the cache's size")
        .register(registry);
    return capacity;
  }

  /**
   * One series of a gauge by state: generations running or waiting for a worker or the KV cache;
   * the KV cache held by running generations, and its size.
   */
  private static void state(
      MeterRegistry registry,
      String name,
      String state,
      LocalCapacity capacity,
      java.util.function.ToDoubleFunction<LocalCapacity> value) {
    Gauge.builder(name, capacity, value)
        .tag("state", state)
        .description(
            name.endsWith("bytes")
                ? "The in-process engine's KV cache: held by running generations, and its size"
                : "In-process generations running, and waiting for a worker or the KV cache")
        .register(registry);
  }
}
