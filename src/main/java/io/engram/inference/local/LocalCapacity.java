package io.engram.inference.local;

import io.engram.inference.engine.EngineException;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the in-process engine may use on this node, shared by every local model: generations at
 * once (WORKER_PROCESSES per model, and each organization's share of them) and the KV cache (the
 * keys and values of every running generation's tokens, KV_CACHE_SIZE_GB, or by default what
 * GPU_MEMORY_FRACTION of the JVM's native memory leaves after the loaded weights).
 *
 * <p>A generation claims its worker and its KV bytes together before it starts and gives them back
 * when it ends; one that cannot have them waits (up to its request's timeout) and one whose KV need
 * alone passes the whole cache is refused at once. Waiting here rather than in jlama keeps a burst
 * of long requests from allocating native memory the JVM does not have (an OutOfMemoryError that
 * would fail every generation running beside them).
 */
public final class LocalCapacity {
  /** jlama allocates a running generation's KV cache in pages of 1 MiB. */
  static final long KV_PAGE = 1L << 20;

  /** The settings the capacity follows (the server's environment, docs/configuration.md). */
  public record Settings(
      int workersPerModel,
      OptionalLong kvCacheBytes,
      double memoryFraction,
      int promptBatch,
      boolean flashAttention,
      String quantization) {
    public static final int DEFAULT_PROMPT_BATCH = 256;

    /** One worker per core, a cache by available memory, the spec's defaults for the rest. */
    public static Settings defaults(int workers) {
      return new Settings(workers, OptionalLong.empty(), 0.9, DEFAULT_PROMPT_BATCH, true, "none");
    }

    /** Prompt tokens per forward pass: BATCH_SIZE, or one at a time without flash attention. */
    int tokensPerPass() {
      return flashAttention ? promptBatch : 1;
    }
  }

  /** A generation's hold on a worker and its KV bytes: given back by {@link #release}. */
  public record Claim(String model, String share, long kvBytes) {}

  private final Settings settings;
  private final long nativeLimit;
  private final Map<String, Long> weights = new HashMap<>();
  private final Map<String, Integer> runningByModel = new HashMap<>();
  private final Map<String, Integer> runningByShare = new HashMap<>();
  private final Map<String, Integer> peakByOrg = new HashMap<>();
  private final AtomicLong promptPasses = new AtomicLong();
  private final AtomicLong refusals = new AtomicLong();
  private long kvReserved;
  private int running;
  private int waiting;

  public LocalCapacity(Settings settings) {
    this(settings, nativeMemoryLimit());
  }

  LocalCapacity(Settings settings, long nativeLimit) {
    this.settings = settings;
    this.nativeLimit = nativeLimit;
  }

  public Settings settings() {
    return settings;
  }

  /**
   * The native memory the JVM lets direct buffers take: -XX:MaxDirectMemorySize, or the heap's
   * maximum when it is not set (the JVM's own rule). jlama's quantized weights and KV pages are
   * direct buffers, so this is the engine's ceiling.
   */
  static long nativeMemoryLimit() {
    try {
      var hotspot =
          ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
      long set = Long.parseLong(hotspot.getVMOption("MaxDirectMemorySize").getValue());
      if (set > 0) {
        return set;
      }
    } catch (RuntimeException e) {
      // not a HotSpot JVM: the heap's maximum, as the JVM itself defaults
    }
    return Runtime.getRuntime().maxMemory();
  }

  /** The KV cache's size now: KV_CACHE_SIZE_GB, else the memory share less the loaded weights. */
  public synchronized long kvCapacity() {
    if (settings.kvCacheBytes().isPresent()) {
      return settings.kvCacheBytes().getAsLong();
    }
    long share = (long) (settings.memoryFraction() * nativeLimit);
    return Math.max(
        0, share - weights.values().stream().mapToLong(Long::longValue).sum());
  }

  /** The KV bytes a generation of {@code tokens} tokens takes, whole pages. */
  static long kvBytes(long tokens, long bytesPerToken) {
    long bytes = tokens * bytesPerToken;
    return ((bytes + KV_PAGE - 1) / KV_PAGE + 1) * KV_PAGE; // one page more: a page per layer group
  }

  /**
   * The context a model can be served with here: its own, or fewer tokens when the whole KV cache
   * holds fewer (as vLLM caps max_model_len by its cache). Requests are checked against it.
   */
  public int servableContext(int modelContext, long bytesPerToken) {
    if (bytesPerToken <= 0) {
      return modelContext;
    }
    long tokens = kvCapacity() / bytesPerToken - 2 * KV_PAGE / bytesPerToken;
    return (int) Math.max(0, Math.min(modelContext, tokens));
  }

  synchronized void weightsLoaded(String model, long nativeBytes) {
    weights.put(model, Math.max(0, nativeBytes));
  }

  synchronized void weightsUnloaded(String model) {
    weights.remove(model);
  }

  /** Native bytes each loaded model's weights took at load (quantized copies). */
  public synchronized Map<String, Long> weights() {
    return Map.copyOf(weights);
  }

  /**
   * Takes a worker of {@code model} within the organization's share, and {@code kvBytes} of the
   * cache, waiting up to {@code waitMillis}: TIMEOUT when they do not come, REJECTED at once when
   * the need alone passes the cache.
   */
  public Claim acquire(String model, String org, int orgShare, long kvBytes, long waitMillis) {
    String share = model + "\n" + (org == null ? "" : org);
    int shareLimit = Math.max(1, Math.min(orgShare, settings.workersPerModel()));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
    synchronized (this) {
      long capacity = kvCapacity();
      if (kvBytes > capacity) {
        refusals.incrementAndGet();
        throw new EngineException(
            EngineException.Failure.REJECTED,
            "This request needs " + mib(kvBytes) + " MiB of KV cache (its prompt and longest "
                + "reply); the in-process engine's cache holds " + mib(capacity) + " MiB "
                + "(KV_CACHE_SIZE_GB, or GPU_MEMORY_FRACTION of the JVM's native memory): ask "
                + "for fewer max_tokens or a shorter prompt");
      }
      waiting++;
      try {
        while (runningByModel.getOrDefault(model, 0) >= settings.workersPerModel()
            || runningByShare.getOrDefault(share, 0) >= shareLimit
            || kvReserved + kvBytes > kvCapacity()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new EngineException(
                EngineException.Failure.TIMEOUT,
                "The local model was busy for longer than " + waitMillis / 1000 + " seconds");
          }
          TimeUnit.NANOSECONDS.timedWait(this, left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new EngineException(
            EngineException.Failure.MODEL_FAILED, "Interrupted while waiting for the model");
      } finally {
        waiting--;
      }
      running++;
      kvReserved += kvBytes;
      runningByModel.merge(model, 1, Integer::sum);
      int mine = runningByShare.merge(share, 1, Integer::sum);
      peakByOrg.merge(org == null ? "" : org, mine, Math::max);
      return new Claim(model, share, kvBytes);
    }
  }

  public synchronized void release(Claim claim) {
    running--;
    kvReserved -= claim.kvBytes();
    runningByModel.computeIfPresent(claim.model(), (k, n) -> n > 1 ? n - 1 : null);
    runningByShare.computeIfPresent(claim.share(), (k, n) -> n > 1 ? n - 1 : null);
    notifyAll();
  }

  void promptPass() {
    promptPasses.incrementAndGet();
  }

  public synchronized int running() {
    return running;
  }

  public synchronized int waiting() {
    return waiting;
  }

  public synchronized long kvReserved() {
    return kvReserved;
  }

  /** Forward passes spent on prompts (BATCH_SIZE tokens each, or one without flash attention). */
  public long promptPasses() {
    return promptPasses.get();
  }

  /** Requests refused because their KV need alone passed the cache. */
  public long refusals() {
    return refusals.get();
  }

  /** The most generations one organization ever ran at once on one model (for tests and audits). */
  public synchronized int peakFor(String org) {
    return peakByOrg.getOrDefault(org, 0);
  }

  private static long mib(long bytes) {
    return (bytes + KV_PAGE - 1) / KV_PAGE;
  }
}
