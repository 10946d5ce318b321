package io.engram.bench;

import io.engram.inference.engine.Generation;
import io.engram.inference.engine.Sampling;
import io.engram.inference.local.LocalCapacity;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.local.TinyModel;
import io.engram.support.LocalChats;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * The in-process engine's settings on this machine (bench/local-engine-bench.sh runs it, one JVM
 * per setting so each resident memory is its own): a Llama model of random weights loaded with
 * MODEL_QUANTIZATION, then a prompt read with BATCH_SIZE tokens per pass (or one at a time without
 * flash attention) and a reply generated. Prints load time, quantized weight bytes, resident
 * memory, prompt tokens per second and reply tokens per second (median of the rounds).
 *
 * <p>Arguments: hidden layers intermediate heads quantization batch flash rounds.
 */
public final class LocalEngineBench {
  private LocalEngineBench() {}

  public static void main(String[] args) throws Exception {
    TinyModel.Shape shape = new TinyModel.Shape(
        Integer.parseInt(args[0]),
        Integer.parseInt(args[2]),
        Integer.parseInt(args[1]),
        Integer.parseInt(args[3]),
        Integer.parseInt(args[3]),
        4096);
    String quantization = args[4];
    int batch = Integer.parseInt(args[5]);
    boolean flash = Boolean.parseBoolean(args[6]);
    int rounds = Integer.parseInt(args[7]);
    Path model = TinyModel.write(Files.createTempDirectory("engram-engine-bench"), "m", 3, shape);
    LocalCapacity capacity = new LocalCapacity(
        new LocalCapacity.Settings(1, OptionalLong.empty(), 0.9, batch, flash, quantization));
    try (LocalEngine engine = new LocalEngine(model, capacity, 600_000)) {
      long started = System.nanoTime();
      engine.load();
      double loadSeconds = (System.nanoTime() - started) / 1e9;
      String prompt = "the team and the office data model ".repeat(40);
      double[] promptRate = new double[rounds];
      double[] replyRate = new double[rounds];
      for (int round = -1; round < rounds; round++) { // round -1 warms the JIT
        Timed first = generate(engine, prompt, 1);
        Timed whole = generate(engine, prompt, 65);
        if (round >= 0) {
          promptRate[round] = first.generation.usage().promptTokens() / first.seconds;
          // the reply's tokens after its first (the random model may end it early)
          replyRate[round] = (whole.generation.usage().completionTokens() - 1)
              / Math.max(1e-9, whole.seconds - first.seconds);
        }
      }
      java.util.Arrays.sort(promptRate);
      java.util.Arrays.sort(replyRate);
      System.out.printf(
          Locale.ROOT,
          "hidden %d layers %d quantization %s batch %d flash %s: load %.1f s, quantized weights"
              + " %.1f MB, resident %.0f MB, prompt %.0f tokens/s, reply %.1f tokens/s%n",
          shape.hidden(),
          shape.layers(),
          quantization,
          batch,
          flash,
          loadSeconds,
          capacity.weights().values().stream().mapToLong(Long::longValue).sum() / 1e6,
          residentMegabytes(),
          promptRate[rounds / 2],
          replyRate[rounds / 2]);
    }
  }

  private record Timed(Generation generation, double seconds) {}

  private static Timed generate(LocalEngine engine, String prompt, int tokens) {
    long started = System.nanoTime();
    Generation generation = LocalChats.generate(
        engine, prompt, new Sampling(tokens, 0.0, 1.0, 0, 0, List.of("</never>"), 1L), piece -> {});
    return new Timed(generation, (System.nanoTime() - started) / 1e9);
  }

  private static double residentMegabytes() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return -1;
  }
}
