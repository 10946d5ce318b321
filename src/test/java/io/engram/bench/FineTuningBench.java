package io.engram.bench;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.types.DataType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tjake.jlama.model.AbstractModel;
import com.github.tjake.jlama.model.ModelSupport;
import com.github.tjake.jlama.safetensors.DType;
import com.github.tjake.jlama.tensor.AbstractTensor;
import com.github.tjake.jlama.tensor.KvBufferCache;
import io.engram.finetuning.trainer.ChatTokenizer;
import io.engram.finetuning.trainer.Checkpoints;
import io.engram.finetuning.trainer.LoraLlama;
import io.engram.finetuning.trainer.LoraSettings;
import io.engram.finetuning.trainer.LoraTrainer;
import io.engram.finetuning.trainer.TorchRuntime;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.local.Safetensors;
import io.engram.inference.local.TinyModel;
import io.engram.platform.json.Json;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Fine-tuning throughput on this machine (bench/fine-tuning-bench.sh runs it, one JVM per model so
 * each peak memory is its own): LoRA training steps on a Llama model of the given size, tokens per
 * second, step time, peak resident memory; and, on the same batch, the forward pass of the trainer
 * (PyTorch) against the local engine's hand-written Java one (jlama, Vector API).
 *
 * <p>Arguments: hidden layers intermediate heads kv-heads steps (hidden 0: the demo model).
 */
public final class FineTuningBench {
  private FineTuningBench() {}

  public static void main(String[] args) throws Exception {
    int hidden = Integer.parseInt(args[0]);
    int layers = Integer.parseInt(args[1]);
    int intermediate = Integer.parseInt(args[2]);
    int heads = Integer.parseInt(args[3]);
    int kvHeads = Integer.parseInt(args[4]);
    int steps = Integer.parseInt(args[5]);
    Path work = Files.createTempDirectory("engram-ft-bench");
    Path model = TinyModel.write(work, 7);
    if (hidden > 0) {
      resize(model, hidden, layers, intermediate, heads, kvHeads);
    }
    Engine engine = TorchRuntime.engine(TorchRuntime.defaultCacheDir());
    List<ChatTokenizer.Example> examples = examples(model);
    int batch = 4;
    LoraTrainer.Plan plan =
        new LoraTrainer.Plan(1000, batch, 1, 1e-3, 0, 1_000_000, 1, LoraSettings.DEFAULT);
    long params = parameters(model);
    System.out.printf(
        Locale.ROOT,
        "model: hidden %d, %d layers, %.1fM parameters; batch %d x %d" + " tokens; %d threads%n",
        hidden == 0 ? 64 : hidden,
        layers,
        params / 1e6,
        batch,
        examples.get(0).tokens().length,
        Runtime.getRuntime().availableProcessors());
    List<LoraTrainer.StepReport> reports = new ArrayList<>();
    long started = System.nanoTime();
    new LoraTrainer(engine)
        .train(
            model,
            "bench",
            examples,
            List.of(),
            plan,
            new Checkpoints(work.resolve("checkpoints")),
            new LoraTrainer.Listener() {
              @Override
              public void step(LoraTrainer.StepReport report) {
                reports.add(report);
              }

              @Override
              public void checkpoint(int step, Checkpoints.Saved saved, LoraTrainer.StepReport r) {}

              @Override
              public boolean cancelled() {
                return reports.size() >= steps;
              }
            });
    double seconds = (System.nanoTime() - started) / 1e9;
    List<LoraTrainer.StepReport> timed =
        reports.subList(Math.min(3, reports.size() - 1), reports.size());
    double tokensPerSecond = timed.stream()
        .mapToDouble(LoraTrainer.StepReport::tokensPerSecond)
        .average()
        .orElse(0);
    long allTokens = examples.get(0).tokens().length * (long) batch;
    System.out.printf(
        Locale.ROOT,
        "training: %d steps in %.1f s (load included); %.0f trained"
            + " tokens/s, %.0f tokens/s through the model, %.1f ms a step%n",
        reports.size(),
        seconds,
        tokensPerSecond,
        tokensPerSecond
            * allTokens
            / Math.max(1, reports.getLast().trainedTokens() / reports.size()),
        1000.0 * (reports.getLast().trainedTokens() / (double) reports.size()) / tokensPerSecond);
    compareForward(engine, model, examples, batch);
    System.out.printf(Locale.ROOT, "peak resident memory: %s%n", peakRss());
  }

  /** The same batch through PyTorch's forward and through jlama's (the engine that serves it). */
  private static void compareForward(
      Engine engine, Path model, List<ChatTokenizer.Example> examples, int batch) throws Exception {
    int[][] tokens = new int[batch][];
    for (int b = 0; b < batch; b++) {
      tokens[b] = examples.get(b).tokens();
    }
    double torch;
    try (NDManager manager = engine.newBaseManager();
        LoraLlama lora =
            LoraLlama.load(model, LoraSettings.DEFAULT, 1, manager, DataType.FLOAT32)) {
      TorchRuntime.withoutGradients();
      torch = time(() -> {
        try (NDScope scope = new NDScope()) {
          scope.suppressNotUsedWarning();
          lora.logits(tokens, null).sum().getFloat();
        }
      });
    }
    AbstractModel jlama = ModelSupport.loadModel(model.toFile(), DType.F32, DType.F32);
    Field cacheField = AbstractModel.class.getDeclaredField("kvBufferCache");
    cacheField.setAccessible(true);
    KvBufferCache cache = (KvBufferCache) cacheField.get(jlama);
    double java = time(() -> {
      for (int[] row : tokens) {
        try (KvBufferCache.KvBuffer kv = cache.getEphemeralKvBuffer()) {
          AbstractTensor out = jlama.batchForward(row, 0, kv);
          out.close();
        }
      }
    });
    jlama.close();
    System.out.printf(
        Locale.ROOT,
        "forward of the batch: PyTorch %.1f ms, jlama (hand-written"
            + " Java, Vector API) %.1f ms%n",
        torch,
        java);
  }

  private static double time(Runnable run) {
    run.run();
    int rounds = 3;
    long started = System.nanoTime();
    for (int i = 0; i < rounds; i++) {
      run.run();
    }
    return (System.nanoTime() - started) / 1e6 / rounds;
  }

  private static List<ChatTokenizer.Example> examples(Path model) throws Exception {
    ChatTokenizer tokenizer = new ChatTokenizer(model);
    List<ChatTokenizer.Example> examples = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(3);
    for (int i = 0; i < 64; i++) {
      StringBuilder question = new StringBuilder("Question " + i + ":");
      StringBuilder answer = new StringBuilder("Answer:");
      for (int w = 0; w < 40; w++) {
        question.append(' ').append((char) ('a' + random.nextInt(26))).append("ata");
        answer.append(' ').append((char) ('a' + random.nextInt(26))).append("emory");
      }
      examples.add(tokenizer.encode(
          List.of(
              new ChatMessage("user", question.toString()),
              new ChatMessage("assistant", answer.toString())),
          new boolean[] {false, true}));
    }
    int length = examples.get(0).tokens().length;
    return examples.stream().filter(e -> e.tokens().length == length).toList();
  }

  /** Rewrites the tiny model's config and weights to the given size, its tokenizer kept. */
  private static void resize(
      Path dir, int hidden, int layers, int intermediate, int heads, int kvHeads) throws Exception {
    ObjectNode config =
        (ObjectNode) Json.MAPPER.readTree(dir.resolve("config.json").toFile());
    config
        .put("hidden_size", hidden)
        .put("num_hidden_layers", layers)
        .put("intermediate_size", intermediate)
        .put("num_attention_heads", heads)
        .put("num_key_value_heads", kvHeads);
    Files.writeString(dir.resolve("config.json"), Json.write(config));
    int vocab = config.get("vocab_size").asInt();
    Map<String, int[]> shapes = TinyModel.tensors(
        vocab,
        new TinyModel.Shape(
            hidden,
            intermediate,
            layers,
            heads,
            kvHeads,
            config.get("max_position_embeddings").asInt()));
    SplittableRandom random = new SplittableRandom(5);
    double scale = 1.0 / Math.sqrt(hidden);
    Safetensors.writeF32(
        dir.resolve("model.safetensors"),
        shapes,
        (name, index) ->
            name.endsWith("norm.weight") ? 1f : (float) (random.nextGaussian() * scale));
  }

  private static long parameters(Path model) throws Exception {
    Safetensors.Reader reader = Safetensors.open(model.resolve("model.safetensors"));
    long total = 0;
    for (String name : reader.names()) {
      total += Safetensors.count(reader.shape(name));
    }
    return total;
  }

  private static String peakRss() throws Exception {
    Optional<String> line = Files.readAllLines(Path.of("/proc/self/status")).stream()
        .filter(l -> l.startsWith("VmHWM:"))
        .findFirst();
    return line.map(l -> l.substring(6).strip()).orElse("unknown");
  }
}
