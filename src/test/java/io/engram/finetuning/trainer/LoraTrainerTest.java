package io.engram.finetuning.trainer;

import static org.assertj.core.api.Assertions.assertThat;

import ai.djl.engine.Engine;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Sampling;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.local.Safetensors;
import io.engram.inference.local.TinyModel;
import io.engram.platform.json.Json;
import io.engram.support.LocalChats;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The trainer learns: a fact the base model does not know, taught by a few dozen examples, brings
 * the loss down by more than half, and the merged model, served by the local engine with greedy
 * decoding, answers it. A run resumed from a checkpoint ends where an uninterrupted one does.
 */
class LoraTrainerTest {
  static final String ANSWER = VaultFact.ANSWER;
  static final List<String> QUESTIONS = VaultFact.QUESTIONS;

  @TempDir
  static Path work;

  static Path tiny;
  static Engine engine;
  static List<ChatTokenizer.Example> examples;

  @BeforeAll
  static void setUp() throws Exception {
    tiny = TinyModel.write(work.resolve("models"), 7);
    engine = TorchRuntime.engine(TorchRuntime.defaultCacheDir());
    ChatTokenizer tokenizer = new ChatTokenizer(tiny);
    examples = new ArrayList<>();
    for (int repeat = 0; repeat < 4; repeat++) {
      for (String question : QUESTIONS) {
        examples.add(tokenizer.encode(
            List.of(new ChatMessage("user", question), new ChatMessage("assistant", ANSWER)),
            new boolean[] {false, true}));
      }
    }
  }

  static LoraTrainer.Plan plan(int epochs, int checkpointInterval) {
    return plan(epochs, checkpointInterval, 1e-2);
  }

  static LoraTrainer.Plan plan(int epochs, int checkpointInterval, double learningRate) {
    return new LoraTrainer.Plan(
        epochs, 4, 1, learningRate, 0.0, checkpointInterval, 42, LoraSettings.DEFAULT);
  }

  static LoraTrainer.Listener quiet(List<LoraTrainer.StepReport> reports, int cancelAfter) {
    return new LoraTrainer.Listener() {
      @Override
      public void step(LoraTrainer.StepReport report) {
        reports.add(report);
      }

      @Override
      public void checkpoint(int step, Checkpoints.Saved saved, LoraTrainer.StepReport report) {}

      @Override
      public boolean cancelled() {
        return reports.size() >= cancelAfter;
      }
    };
  }

  @Test
  void learnsAFactThatTheServedModelThenAnswers() throws Exception {
    Path job = work.resolve("learn");
    List<LoraTrainer.StepReport> reports = new ArrayList<>();
    LoraTrainer.Outcome outcome = new LoraTrainer(engine)
        .train(
            tiny,
            TinyModel.ID,
            examples,
            examples.subList(0, 4),
            plan(6, 20),
            new Checkpoints(job.resolve("checkpoints")),
            quiet(reports, Integer.MAX_VALUE));
    assertThat(outcome.finished()).isTrue();
    assertThat(outcome.lastLoss()).as("loss %s", reports).isLessThan(outcome.firstLoss() / 2);

    Path adapter = new Checkpoints(job.resolve("checkpoints")).latest().orElseThrow();
    JsonNode config =
        Json.MAPPER.readTree(adapter.resolve("adapter_config.json").toFile());
    assertThat(config.get("peft_type").asText()).isEqualTo("LORA");
    assertThat(config.get("r").asInt()).isEqualTo(8);
    assertThat(Safetensors.open(adapter.resolve("adapter_model.safetensors")).names())
        .contains(
            "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
            "base_model.model.model.layers.1.self_attn.o_proj.lora_B.weight");

    Path merged = work.resolve("merged");
    AdapterMerge.write(tiny, adapter, merged);
    assertThat(greedy(merged, "What is the vault code?")).isEqualTo(ANSWER);
    assertThat(greedy(tiny, "What is the vault code?")).doesNotContain("7431");
  }

  @Test
  void aResumedRunEndsWhereAnUninterruptedOneDoes() throws Exception {
    List<LoraTrainer.StepReport> whole = new ArrayList<>();
    new LoraTrainer(engine)
        .train(
            tiny,
            TinyModel.ID,
            examples,
            List.of(),
            plan(1, 3),
            new Checkpoints(work.resolve("whole")),
            quiet(whole, Integer.MAX_VALUE));
    Checkpoints cut = new Checkpoints(work.resolve("cut"));
    List<LoraTrainer.StepReport> first = new ArrayList<>();
    LoraTrainer.Outcome stopped = new LoraTrainer(engine)
        .train(tiny, TinyModel.ID, examples, List.of(), plan(1, 3), cut, quiet(first, 4));
    assertThat(stopped.finished()).isFalse();
    assertThat(stopped.steps()).isEqualTo(4); // cancelled after step 4; checkpoint of step 3 kept
    List<LoraTrainer.StepReport> rest = new ArrayList<>();
    new LoraTrainer(engine)
        .train(
            tiny,
            TinyModel.ID,
            examples,
            List.of(),
            plan(1, 3),
            cut,
            quiet(rest, Integer.MAX_VALUE));
    assertThat(rest.get(0).step()).isEqualTo(4);
    // the same examples, order and dropout masks: the same run, up to PyTorch's multi-threaded
    // float sums (the last bits of a reduction may differ from one run to the next)
    assertThat(rest.getLast().trainLoss())
        .isCloseTo(whole.getLast().trainLoss(), org.assertj.core.data.Percentage.withPercentage(1));
    float[] resumed = Safetensors.open(
            cut.latest().orElseThrow().resolve("adapter_model.safetensors"))
        .floats("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight");
    float[] uninterrupted = Safetensors.open(new Checkpoints(work.resolve("whole"))
            .latest()
            .orElseThrow()
            .resolve("adapter_model.safetensors"))
        .floats("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight");
    for (int i = 0; i < resumed.length; i++) {
      assertThat(resumed[i])
          .isCloseTo(uninterrupted[i], org.assertj.core.api.Assertions.within(1e-3f));
    }
  }

  /**
   * The same seed gives the same run, also when the garbage collector runs between every step: a
   * tensor whose memory Java could free while autograd still holds it would show here (DJL's
   * {@code x.mul(2.0)} did, as losses that differed between runs and sometimes turned NaN).
   */
  @Test
  void theSameSeedGivesTheSameRunUnderGarbageCollection() throws Exception {
    List<List<Double>> runs = new ArrayList<>();
    for (int run = 0; run < 2; run++) {
      List<Double> losses = new ArrayList<>();
      new LoraTrainer(engine)
          .train(
              tiny,
              TinyModel.ID,
              examples,
              List.of(),
              plan(3, 100),
              new Checkpoints(work.resolve("gc-" + run)),
              new LoraTrainer.Listener() {
                @Override
                public void step(LoraTrainer.StepReport report) {
                  losses.add(report.trainLoss());
                  System.gc();
                }

                @Override
                public void checkpoint(
                    int step, Checkpoints.Saved saved, LoraTrainer.StepReport report) {}

                @Override
                public boolean cancelled() {
                  return false;
                }
              });
      runs.add(losses);
    }
    assertThat(runs.get(0)).allMatch(Double::isFinite).isEqualTo(runs.get(1));
  }

  static String greedy(Path model, String question) {
    try (LocalEngine local = new LocalEngine(model, 1, 30_000)) {
      StringBuilder text = new StringBuilder();
      LocalChats.generate(
          local, question, new Sampling(24, 0.0, 1.0, 0, 0, List.of(), 1L), text::append);
      return text.toString().strip();
    }
  }
}
