package io.engram.inference.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.safetensors.SafeTensorSupport;
import com.github.tjake.jlama.safetensors.prompt.PromptContext;
import com.github.tjake.jlama.safetensors.prompt.PromptSupport;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.TokenSink;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * In-process generation with jlama from a model directory (config.json, tokenizer.json,
 * model.safetensors, and a chat template in tokenizer_config.json).
 *
 * <p>The generation loop is Engram's rather than jlama's {@code generate()}: that one keeps a KV
 * buffer per session id for the life of the model (a leak when every request is a new session),
 * samples with temperature only, and cannot be stopped. Here each request has an ephemeral KV
 * buffer closed when it ends, sampling takes top_p and the penalties, stop sequences end the
 * reply, JSON mode narrows each token to those that keep the reply one JSON object ({@link
 * JsonMode}), and a caller that leaves stops the loop at its next token.
 *
 * <p>The node's {@link LocalCapacity} decides when a generation runs: at most WORKER_PROCESSES at
 * once per model, each organization within its share, and every running generation's KV cache
 * within the node's; the rest wait up to REQUEST_TIMEOUT. MODEL_QUANTIZATION=int4 quantizes the
 * layers' weights at load, and the prompt goes through the model BATCH_SIZE tokens per
 * forward pass (one at a time with ENABLE_FLASH_ATTENTION=false).
 */
public final class LocalEngine implements Engine, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalEngine.class);

  private static final Field KV_CACHE = kvCacheField();

  /**
   * Positions at the end of the model's context the engine does not use. jlama's rotary table has
   * exactly {@code contextLength} positions, but its grouped-query attention reads a head's width
   * past the position it is at: a reply that ran to the last two positions failed with "Index
   * 16384 out of bounds for length 16384" (a 500, seen with greedy decoding of the demo model).
   */
  static final int ROPE_MARGIN = 2;

  private final Path directory;
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final LocalCapacity capacity;
  private final long queueTimeoutMillis;
  private final java.util.concurrent.locks.ReentrantLock passes =
      new java.util.concurrent.locks.ReentrantLock(true);
  private volatile AbstractModel model;
  /** The vocabulary's texts for JSON mode, worked out at its first use. */
  private volatile String[] jsonTexts;

  public LocalEngine(Path directory, LocalCapacity capacity, long queueTimeoutMillis) {
    this.directory = directory;
    this.capacity = capacity;
    this.queueTimeoutMillis = queueTimeoutMillis;
  }

  /** An engine with a capacity of its own: {@code workers} at once, the default KV cache. */
  public LocalEngine(Path directory, int workers, long queueTimeoutMillis) {
    this(
        directory, new LocalCapacity(LocalCapacity.Settings.defaults(workers)), queueTimeoutMillis);
  }

  /** The node's capacity this engine runs within (shared by every local model). */
  public LocalCapacity capacity() {
    return capacity;
  }

  /** The context this model is served with on this node: its own, or what the KV cache holds. */
  public int servableContext(LocalModels.Found found) {
    return capacity.servableContext(found.contextLength(), found.kvBytesPerToken());
  }

  /** The model's directory (config, tokenizer, weights): what a fine-tuning job trains from. */
  public Path directory() {
    return directory;
  }

  /** Loads the model now (at start-up), so the first request does not pay for it. */
  public void load() {
    model();
  }

  /**
   * Loads the model and runs one token through it: proof that the files make a model this engine
   * serves (an upload is refused otherwise). Failures are MODEL_UNAVAILABLE with jlama's reason.
   */
  public void probe() {
    AbstractModel m = model();
    try (KvBufferCache.KvBuffer kv = ephemeralBuffer(m)) {
      m.getTokenizer().encode("probe");
      AbstractTensor output = pass(() -> m.forward(0, 0, kv, Optional.empty()));
      pass(() -> m.getLogits(output));
      output.close();
    } catch (RuntimeException e) {
      throw new EngineException(
          EngineException.Failure.MODEL_UNAVAILABLE,
          "The model does not run: " + e.getMessage(),
          null,
          e);
    }
  }

  private AbstractModel model() {
    AbstractModel loaded = model;
    if (loaded == null) {
      synchronized (this) {
        if (model == null) {
          try {
            long started = System.nanoTime();
            String quantization = capacity.settings().quantization();
            Optional<DType> weights = quantized(quantization);
            // int4 weights are multiplied with F32 activations: jlama's int8 activations would
            // meet the output head, which it keeps in F32, in a product it has no kernel for.
            model = weights.isEmpty()
                ? ModelSupport.loadModel(directory.toFile(), DType.F32, DType.I8)
                : ModelSupport.loadModel(
                    AbstractModel.InferenceType.FULL_GENERATION,
                    directory.toFile(),
                    null,
                    DType.F32,
                    DType.F32,
                    weights,
                    Optional.empty(),
                    Optional.empty(),
                    dir -> new DenseWeights(SafeTensorSupport.loadWeights(dir)));
            long nativeBytes = weights.isPresent() ? QuantizedWeights.bytes(model) : 0;
            capacity.weightsLoaded(directory.toString(), nativeBytes);
            LOG.info(
                "local model {} loaded in {} ms (weights {}: {} MiB quantized in native memory, "
                    + "the rest read from the mapped file)",
                directory.getFileName(),
                (System.nanoTime() - started) / 1_000_000,
                quantization,
                nativeBytes >> 20);
          } catch (RuntimeException e) {
            throw new EngineException(
                EngineException.Failure.MODEL_UNAVAILABLE,
                "The model in " + directory + " could not be loaded: " + rootCause(e),
                null,
                e);
          }
        }
        loaded = model;
      }
    }
    return loaded;
  }

  /**
   * One pass through the model, never two at once: jlama's layers keep per-layer scratch arrays
   * (the query/key/value and feed-forward results of the pass under way) in fields, so two
   * generations passing through one model at the same time overwrite each other's (seen as a 500
   * {@code model_error} under concurrent chats). Generations still run side by side, taking turns
   * token by token; each pass itself uses every core (jlama splits its products across them), so
   * little is lost on throughput. The lock is fair: a long prompt does not starve the others.
   */
  private <T> T pass(java.util.function.Supplier<T> work) {
    passes.lock();
    try {
      return work.get();
    } finally {
      passes.unlock();
    }
  }

  /** The innermost cause, named (jlama's reflective loading wraps its own failures). */
  private static String rootCause(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.toString() : root.getMessage();
  }

  /**
   * MODEL_QUANTIZATION as jlama's weight type: int4 quantizes the layers at load (blocks of 32
   * weights sharing a scale), none keeps the file's. int8 is refused at start-up: jlama has no
   * matrix product for int8 weights.
   */
  static Optional<DType> quantized(String quantization) {
    return quantization.equals("int4") ? Optional.of(DType.Q4) : Optional.empty();
  }

  /**
   * JSON mode ({@code response_format: json_object}) is carried out by constrained decoding
   * ({@link JsonMode}); nothing else of a request's tooling is (tools, JSON schemas, several
   * choices, log probabilities, logit bias): the gateway refuses those by name.
   */
  @Override
  public boolean carries(String field, JsonNode value) {
    return switch (field) {
      case "response_format" -> value.path("type").asText().equals("json_object");
      case "store" -> value.isBoolean() && !value.asBoolean(); // nothing is stored: as asked
      default -> io.engram.inference.engine.Sampling.FIELDS.contains(field);
    };
  }

  private JsonMode jsonMode(AbstractModel m, GenerationRequest request) {
    if (request.tooling() == null || !request.tooling().has("response_format")) {
      return null;
    }
    String[] texts = jsonTexts;
    if (texts == null) {
      synchronized (this) {
        if (jsonTexts == null) {
          jsonTexts = JsonMode.texts(m.getTokenizer(), m.getConfig().vocabularySize);
        }
        texts = jsonTexts;
      }
    }
    return JsonMode.over(texts);
  }

  /**
   * Runs once a worker and the KV cache for the prompt and the longest reply are free, waiting at
   * most the request's own timeout (its organization's), else the engine's.
   */
  @Override
  public Generation generate(GenerationRequest request, TokenSink sink) {
    AbstractModel m = model();
    int[] prompt = m.encodePrompt(prompt(m, request));
    long perToken = 2L
        * m.getConfig().numberOfLayers
        * m.getConfig().kvLength
        * m.getWorkingDType().size();
    int context = capacity.servableContext(m.getConfig().contextLength - ROPE_MARGIN, perToken);
    if (prompt.length >= context) {
      throw new EngineException(
          EngineException.Failure.REJECTED,
          "The prompt is " + prompt.length + " tokens; this model's context is " + context
              + (context < m.getConfig().contextLength ? " here (what the KV cache holds)" : ""));
    }
    int maxTokens = Math.min(request.sampling().maxTokens(), context - prompt.length);
    long waitMillis =
        request.timeout() == null ? queueTimeoutMillis : request.timeout().toMillis();
    LocalCapacity.Claim claim = capacity.acquire(
        directory.toString(),
        request.orgId(),
        request.share().workers(),
        LocalCapacity.kvBytes(prompt.length + maxTokens, perToken),
        waitMillis);
    peak.accumulateAndGet(running.incrementAndGet(), Math::max);
    try {
      return run(m, prompt, maxTokens, request, sink);
    } finally {
      running.decrementAndGet();
      capacity.release(claim);
    }
  }

  /**
   * The prompt through the model BATCH_SIZE tokens per forward pass, each pass's keys and values
   * kept in the cache for the next: the output of the prompt's last token, from which the first
   * reply token is drawn.
   */
  private AbstractTensor readPrompt(
      AbstractModel m, int[] prompt, KvBufferCache.KvBuffer kv, AtomicBoolean gone) {
    int step = capacity.settings().tokensPerPass();
    AbstractTensor output = null;
    for (int start = 0; start < prompt.length; start += step) {
      if (gone.get()) {
        if (output != null) {
          output.close();
        }
        throw new ClientGoneException(null);
      }
      if (output != null) {
        output.close();
      }
      int end = Math.min(prompt.length, start + step);
      int from = start;
      output =
          pass(() -> m.batchForward(java.util.Arrays.copyOfRange(prompt, from, end), from, kv));
      capacity.promptPass();
    }
    return output;
  }

  private Generation run(
      AbstractModel m, int[] prompt, int maxTokens, GenerationRequest request, TokenSink sink) {
    AtomicBoolean gone = new AtomicBoolean();
    sink.onClientGone(() -> gone.set(true));
    sink.begin();
    Sampler sampler = new Sampler(request.sampling(), m.getConfig().vocabularySize);
    StopSequences stops = new StopSequences(request.sampling().stop());
    Detokenizer detokenizer = new Detokenizer(m.getTokenizer());
    JsonMode json = jsonMode(m, request);
    int generated = 0;
    String finish = Generation.LENGTH;
    try (KvBufferCache.KvBuffer kv = ephemeralBuffer(m)) {
      AbstractTensor batch = readPrompt(m, prompt, kv, gone);
      AbstractTensor last = batch.slice(batch.shape().first() - 1);
      AbstractTensor promptOutput =
          batch; // the slice reads its memory: closed after the first token
      int position = prompt.length;
      while (generated < maxTokens) {
        if (gone.get()) {
          throw new ClientGoneException(null);
        }
        BitSet allowed = json == null ? null : json.allowed(maxTokens - generated - 1);
        if (allowed != null && allowed.isEmpty()) {
          break; // the budget left cannot close the object: cut, as OpenAI's JSON mode is
        }
        AbstractTensor current = last;
        int next = sampler.next(pass(() -> m.getLogits(current)), allowed);
        if (json != null) {
          json.accept(next);
        }
        last.close();
        if (promptOutput != null) {
          promptOutput.close();
          promptOutput = null;
        }
        generated++;
        if (m.getConfig().eosTokens.contains(next)) {
          finish = Generation.STOP;
          break;
        }
        if (!m.getTokenizer().getModel().isSpecialToken(next)) {
          String piece = stops.accept(detokenizer.next(next));
          if (!piece.isEmpty()) {
            sink.text(piece);
          }
          if (stops.stopped() || (json != null && json.complete())) {
            finish = Generation.STOP;
            break;
          }
        }
        if (generated >= maxTokens) {
          break; // the reply is whole: no forward pass for a token nobody reads
        }
        int at = position++;
        last = pass(() -> m.forward(next, at, kv, Optional.empty()));
      }
      String rest = stops.accept(detokenizer.flush()) + stops.flush();
      if (!rest.isEmpty()) {
        sink.text(rest);
      }
    } catch (EngineException | ClientGoneException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new EngineException(
          EngineException.Failure.MODEL_FAILED,
          "The local model failed while generating: " + e.getMessage(),
          null,
          e);
    }
    return new Generation(stops.text(), finish, new Generation.Usage(prompt.length, generated));
  }

  private static PromptContext prompt(AbstractModel m, GenerationRequest request) {
    if (!request.isChat()) {
      return PromptContext.of(request.prompt());
    }
    PromptSupport support = m.promptSupport()
        .orElseThrow(() -> new EngineException(
            EngineException.Failure.MODEL_UNAVAILABLE,
            "This model has no chat template (tokenizer_config.json "
                + "chat_template); use /v1/completions"));
    return ChatPrompt.render(support, request.messages(), true);
  }

  /**
   * A KV buffer for one request, not kept by the model once closed. jlama keeps its cache
   * protected; it is reached by reflection (jlama is on the class path), the field found once.
   */
  private static KvBufferCache.KvBuffer ephemeralBuffer(AbstractModel m) {
    try {
      return ((KvBufferCache) KV_CACHE.get(m)).getEphemeralKvBuffer();
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("jlama's kvBufferCache is not accessible", e);
    }
  }

  private static Field kvCacheField() {
    try {
      Field field = AbstractModel.class.getDeclaredField("kvBufferCache");
      field.setAccessible(true);
      return field;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("this jlama version has no kvBufferCache field", e);
    }
  }

  /** Generations running now, and the most that ever ran at once (for metrics and tests). */
  public int running() {
    return running.get();
  }

  public int peakRunning() {
    return peak.get();
  }

  @Override
  public void close() {
    AbstractModel loaded = model;
    if (loaded != null) {
      loaded.close();
      capacity.weightsUnloaded(
          directory.toString()); // its quantized weights leave the cache's share
    }
  }
}
