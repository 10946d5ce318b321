package io.engram.finetuning.trainer;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.NDScope;
import ai.djl.ndarray.types.DataType;
import ai.djl.training.GradientCollector;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Trains a LoRA adapter on a base model: epochs over the examples in an order drawn from the
 * seed, each optimizer step the mean of {@code accumulation} micro-batches of {@code batchSize}
 * examples, AdamW with warm-up and decay, a checkpoint every {@code checkpointInterval} steps. The
 * same seed gives the same run, and a run resumed from a checkpoint continues exactly where it
 * stopped: the example order and the dropout masks are functions of the seed and the step.
 */
public final class LoraTrainer {
  /** What one training run does. */
  public record Plan(
      int epochs,
      int batchSize,
      int accumulation,
      double learningRate,
      double weightDecay,
      int checkpointInterval,
      long seed,
      LoraSettings lora) {}

  /** One optimizer step's figures. */
  public record StepReport(
      int step,
      int totalSteps,
      double trainLoss,
      Double validationLoss,
      double learningRate,
      long trainedTokens,
      double tokensPerSecond) {}

  /** Where a run reports and whether it should stop. */
  public interface Listener {
    void step(StepReport report);

    /** A checkpoint at {@code step} is saved and complete. */
    void checkpoint(int step, Checkpoints.Saved saved, StepReport report);

    boolean cancelled();

    /** The run continues from a checkpoint saved at {@code step}. */
    default void resumed(int step) {}
  }

  /** How a run ended. */
  public record Outcome(
      boolean finished, int steps, long trainedTokens, double firstLoss, double lastLoss) {}

  /** Steps in a row whose loss or gradients overflowed, after which a run is given up. */
  static final int MAX_DIVERGED_STEPS = 3;

  /** The run's loss or gradients stopped being finite numbers and stayed so. */
  public static final class DivergedException extends RuntimeException {
    public DivergedException(int step, double learningRate) {
      super("training diverged at step " + step + " (the loss or its gradients overflowed "
          + MAX_DIVERGED_STEPS + " steps in a row); try a lower learning_rate than "
          + learningRate);
    }
  }

  private final Engine engine;

  public LoraTrainer(Engine engine) {
    this.engine = engine;
  }

  /** The optimizer steps a plan takes over {@code examples} examples. */
  public static int totalSteps(Plan plan, int examples) {
    int microsPerEpoch = (examples + plan.batchSize() - 1) / plan.batchSize();
    return (plan.epochs() * microsPerEpoch + plan.accumulation() - 1) / plan.accumulation();
  }

  public Outcome train(
      Path baseModel,
      String baseModelId,
      List<ChatTokenizer.Example> training,
      List<ChatTokenizer.Example> validation,
      Plan plan,
      Checkpoints checkpoints,
      Listener listener)
      throws IOException {
    TorchRuntime.withoutGradients();
    List<int[]> micros = schedule(training.size(), plan);
    int totalSteps = totalSteps(plan, training.size());
    Schedule rates = Schedule.of(plan.learningRate(), totalSteps);
    try (NDManager manager = engine.newBaseManager();
        LoraLlama model =
            LoraLlama.load(baseModel, plan.lora(), plan.seed(), manager, DataType.FLOAT32)) {
      List<NDArray> parameters = new ArrayList<>();
      model.adapters().values().forEach(adapter -> {
        parameters.add(adapter.a());
        parameters.add(adapter.b());
      });
      AdamW optimizer = new AdamW(parameters, plan.weightDecay());
      Checkpoints.Resumed resumed = checkpoints.resume(model, optimizer);
      int step = resumed.step();
      if (step > 0) {
        listener.resumed(step);
      }
      long trainedTokens = resumed.trainedTokens();
      double firstLoss = resumed.firstLoss();
      double lastLoss = Double.NaN;
      int diverged = 0;
      while (step < totalSteps) {
        if (listener.cancelled()) {
          return new Outcome(false, step, trainedTokens, firstLoss, lastLoss);
        }
        long started = System.nanoTime();
        SplittableRandom dropout = new SplittableRandom(plan.seed() * 1_000_003L + step);
        double lossSum = 0;
        int count = 0;
        long stepTokens = 0;
        for (int j = 0; j < plan.accumulation(); j++) {
          int micro = step * plan.accumulation() + j;
          if (micro >= micros.size()) {
            break;
          }
          TokenBatch batch = batch(training, micros.get(micro));
          stepTokens += batch.trainedTokens();
          lossSum += backward(model, batch, dropout, plan.accumulation());
          count++;
        }
        step++;
        double rate = rates.at(step);
        double norm;
        try (NDScope scope = new NDScope()) {
          scope.suppressNotUsedWarning();
          norm = optimizer.step(rate);
        }
        lastLoss = lossSum / count;
        if (!Double.isFinite(norm) || !Double.isFinite(lastLoss)) {
          if (++diverged >= MAX_DIVERGED_STEPS) {
            throw new DivergedException(step, plan.learningRate());
          }
        } else {
          diverged = 0;
        }
        if (Double.isNaN(firstLoss)) {
          firstLoss = lastLoss;
        }
        trainedTokens += stepTokens;
        double seconds = (System.nanoTime() - started) / 1e9;
        boolean checkpoint = step % plan.checkpointInterval() == 0 || step == totalSteps;
        Double validationLoss =
            checkpoint && !validation.isEmpty() ? evaluate(model, validation, plan) : null;
        StepReport report = new StepReport(
            step, totalSteps, lastLoss, validationLoss, rate, trainedTokens, stepTokens / seconds);
        listener.step(report);
        if (checkpoint) {
          Checkpoints.Saved saved =
              checkpoints.save(model, optimizer, baseModelId, step, trainedTokens, firstLoss);
          listener.checkpoint(step, saved, report);
        }
      }
      return new Outcome(true, step, trainedTokens, firstLoss, lastLoss);
    }
  }

  /** Forward and backward for one micro-batch; its loss scaled so the step averages its micro-batches. */
  private double backward(
      LoraLlama model, TokenBatch batch, SplittableRandom dropout, int accumulation) {
    TorchRuntime.GRADIENTS.lock();
    try (NDScope scope = new NDScope();
        GradientCollector collector = engine.newGradientCollector()) {
      scope.suppressNotUsedWarning();
      NDArray loss = model.loss(batch, dropout);
      collector.backward(loss.div(model.scalar(accumulation)));
      return loss.getFloat();
    } finally {
      TorchRuntime.GRADIENTS.unlock();
    }
  }

  /** The mean loss over the validation examples, without dropout. */
  public static double evaluate(LoraLlama model, List<ChatTokenizer.Example> examples, Plan plan) {
    double sum = 0;
    int batches = 0;
    for (int from = 0; from < examples.size(); from += plan.batchSize()) {
      int[] indices = new int[Math.min(plan.batchSize(), examples.size() - from)];
      for (int i = 0; i < indices.length; i++) {
        indices[i] = from + i;
      }
      try (NDScope scope = new NDScope()) {
        scope.suppressNotUsedWarning();
        sum += model.loss(batch(examples, indices), null).getFloat();
      }
      batches++;
    }
    return sum / Math.max(1, batches);
  }

  /** Every micro-batch of the run, epoch after epoch, each epoch in its own seeded order. */
  static List<int[]> schedule(int examples, Plan plan) {
    List<int[]> micros = new ArrayList<>();
    for (int epoch = 0; epoch < plan.epochs(); epoch++) {
      int[] order = new int[examples];
      for (int i = 0; i < examples; i++) {
        order[i] = i;
      }
      SplittableRandom random = new SplittableRandom(plan.seed() * 31 + epoch);
      for (int i = examples - 1; i > 0; i--) {
        int j = random.nextInt(i + 1);
        int swap = order[i];
        order[i] = order[j];
        order[j] = swap;
      }
      for (int from = 0; from < examples; from += plan.batchSize()) {
        int size = Math.min(plan.batchSize(), examples - from);
        int[] micro = new int[size];
        System.arraycopy(order, from, micro, 0, size);
        micros.add(micro);
      }
    }
    return micros;
  }

  /** The examples padded (with token 0, not trained on) to the longest of them. */
  static TokenBatch batch(List<ChatTokenizer.Example> examples, int[] indices) {
    int length = 0;
    for (int index : indices) {
      length = Math.max(length, examples.get(index).tokens().length);
    }
    int[][] tokens = new int[indices.length][length];
    float[][] weights = new float[indices.length][length];
    for (int b = 0; b < indices.length; b++) {
      ChatTokenizer.Example example = examples.get(indices[b]);
      System.arraycopy(example.tokens(), 0, tokens[b], 0, example.tokens().length);
      for (int t = 0; t < example.trainedNext().length; t++) {
        weights[b][t] = example.trainedNext()[t] ? 1f : 0f;
      }
    }
    return new TokenBatch(tokens, weights);
  }
}
