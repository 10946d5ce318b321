package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.model.embedding.onnx.allminilml6v2q.AllMiniLmL6V2QuantizedEmbeddingModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Questions embedded together (one call to the model for many) get the vectors the model's own
 * one-text path gives them, and concurrent questions really share calls.
 */
class QueryBatchingTest {
  private static final List<String> TEXTS = List.of(
      "What did Dana ask about the enterprise plan for Acme (ticket 10001)?",
      "hi",
      "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful.",
      "Ça coûte 12 € — naïve café, 東京 and emoji 🎉 in one line",
      "word ".repeat(300).strip(),
      "a much longer memory than the model reads at once: "
          + "tokens and more tokens ".repeat(200));

  private final Embedder embedder = Embedder.shared(tempDir());
  private final AllMiniLmL6V2QuantizedEmbeddingModel reference =
      new AllMiniLmL6V2QuantizedEmbeddingModel();

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("engram-embedder");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private float[] referenceVector(String text) {
    float[] vector = reference.embed(text).content().vector();
    double norm = Math.sqrt(Embedder.dot(vector, vector));
    for (int i = 0; i < vector.length; i++) {
      vector[i] /= (float) norm;
    }
    return vector;
  }

  @Test
  void textsEmbeddedTogetherGetExactlyTheVectorsTheModelGivesEachAlone() {
    // Memories and the embeddings route: a text's vector must not depend on its batch mates.
    List<float[]> together = embedder.embedAll(TEXTS);
    for (int i = 0; i < TEXTS.size(); i++) {
      float[] alone = referenceVector(TEXTS.get(i));
      assertThat(Embedder.dot(together.get(i), alone))
          .as("cosine of text %d with the model's one-text vector", i)
          .isGreaterThan(0.99999);
      assertThat(Embedder.dot(embedder.embed(TEXTS.get(i)), alone)).isGreaterThan(0.99999);
    }
  }

  @Test
  void storageCountsEachVectorAtTheModelsSize() {
    assertThat(embedder.embed("hello")).hasSize(Embedder.DIMENSIONS);
    assertThat(io.engram.instances.storage.StorageUsage.VECTOR_BYTES)
        .isEqualTo((long) Embedder.DIMENSIONS * Float.BYTES);
  }

  @Test
  void tokensAreCountedAsTheModelReadsThem() {
    var counted = embedder.embedCounted(List.of("hello world", "hello"));
    // [CLS] hello world [SEP] and [CLS] hello [SEP]
    assertThat(counted.tokens()).isEqualTo(7);
  }

  @Test
  void concurrentQuestionsAreAnsweredEachWithItsOwnVectorAndABlankOneFailsAlone() throws Exception {
    List<String> questions = new ArrayList<>();
    for (int i = 0; i < 48; i++) {
      questions.add("What did person " + i + " say about topic " + (i * 7 % 13) + "?");
    }
    questions.set(20, "   ");
    try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
      List<Future<float[]>> answers = new ArrayList<>();
      for (String question : questions) {
        answers.add(pool.submit(() -> embedder.embed(question)));
      }
      for (int i = 0; i < questions.size(); i++) {
        Future<float[]> answer = answers.get(i);
        if (i == 20) {
          assertThatThrownBy(answer::get).hasCauseInstanceOf(IllegalArgumentException.class);
        } else {
          // Questions that shared a call move a little: the quantized model scales a call's
          // activations by their range over the whole call (measured: cosine 0.990-0.995; LoCoMo's
          // recall is the same with questions asked 8 at a time, docs/benchmarks.md).
          assertThat(Embedder.dot(answer.get(), referenceVector(questions.get(i))))
              .isGreaterThan(0.98);
        }
      }
    }
  }

  /** A model whose first call holds its slot until let go; every call's size is kept. */
  private static QueryBatcher heldFirst(
      CountDownLatch holding, CountDownLatch letGo, List<Integer> callSizes) {
    return new QueryBatcher(1, texts -> {
      callSizes.add(texts.size());
      if (callSizes.size() == 1) {
        holding.countDown();
        await(letGo);
      }
      if (texts.contains("bad")) {
        throw new IllegalArgumentException("cannot embed 'bad'");
      }
      return texts.stream().map(text -> new float[] {text.length()}).toList();
    });
  }

  /** Asks each question on its own thread while the first call holds the slot; then lets go. */
  private static List<Future<float[]>> askWhileHeld(
      QueryBatcher batcher,
      CountDownLatch holding,
      CountDownLatch letGo,
      ExecutorService pool,
      List<String> questions)
      throws Exception {
    List<Future<float[]>> answers = new ArrayList<>();
    answers.add(pool.submit(() -> batcher.embed("first")));
    assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue();
    for (String question : questions) {
      answers.add(pool.submit(() -> batcher.embed(question)));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (batcher.queued() < questions.size() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(batcher.queued()).isEqualTo(questions.size());
    letGo.countDown();
    return answers;
  }

  @Test
  void questionsQueuedWhileTheSlotIsBusyShareOneCallAndTheSlotPassesOn() throws Exception {
    List<Integer> callSizes = new CopyOnWriteArrayList<>();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    QueryBatcher batcher = heldFirst(holding, letGo, callSizes);
    List<String> questions = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      questions.add("q".repeat(i + 1));
    }
    try (ExecutorService pool = Executors.newFixedThreadPool(10)) {
      List<Future<float[]>> answers = askWhileHeld(batcher, holding, letGo, pool, questions);
      assertThat(answers.getFirst().get(5, TimeUnit.SECONDS)).containsExactly(5f);
      for (int i = 0; i < 8; i++) {
        assertThat(answers.get(i + 1).get(5, TimeUnit.SECONDS)).containsExactly(i + 1f);
      }
    }
    // The first call handed the slot to the oldest waiting question, which took the rest along.
    assertThat(callSizes).containsExactly(1, 8);
    assertThat(batcher.queued()).isZero();
    // And the slot was freed: a question now goes through at once, alone.
    assertThat(batcher.embed("alone")).containsExactly(5f);
    assertThat(callSizes).containsExactly(1, 8, 1);
  }

  @Test
  void aQuestionTheModelRefusesFailsAloneAndOthersInItsCallAreAnswered() throws Exception {
    List<Integer> callSizes = new CopyOnWriteArrayList<>();
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch letGo = new CountDownLatch(1);
    QueryBatcher batcher = heldFirst(holding, letGo, callSizes);
    try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
      List<Future<float[]>> answers =
          askWhileHeld(batcher, holding, letGo, pool, List.of("good", "bad"));
      assertThat(answers.get(1).get(5, TimeUnit.SECONDS)).containsExactly(4f);
      assertThatThrownBy(() -> answers.get(2).get(5, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalArgumentException.class);
    }
    // Both rode in one call, which the model refused; then each was asked alone.
    assertThat(callSizes.subList(0, 2)).containsExactly(1, 2);
    assertThat(callSizes).hasSize(4);
  }

  private static boolean await(CountDownLatch latch) {
    try {
      return latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
