package io.engram.inference.local;

import io.engram.inference.engine.Sampling;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks the next token from the model's probabilities with the request's sampling: frequency and
 * presence penalties on tokens already generated, temperature (0: greedy), then nucleus (top_p)
 * sampling, among the tokens allowed (JSON mode narrows them). A seed makes the choice repeatable.
 */
final class Sampler {
  private final Sampling sampling;
  private final Random random;
  private final int[] counts;

  Sampler(Sampling sampling, int vocabularySize) {
    this.sampling = sampling;
    this.random =
        sampling.seed() == null ? ThreadLocalRandom.current() : new Random(sampling.seed());
    this.counts = new int[vocabularySize];
  }

  int next(float[] probabilities) {
    return next(probabilities, null);
  }

  /** The next token among {@code allowed} (null: any; never empty). */
  int next(float[] probabilities, BitSet allowed) {
    int n = probabilities.length;
    double[] logits = new double[n];
    for (int i = 0; i < n; i++) {
      if (allowed != null && !allowed.get(i)) {
        logits[i] = Double.NEGATIVE_INFINITY; // weight 0, never the greatest
        continue;
      }
      logits[i] = Math.log(Math.max(probabilities[i], 1e-30f));
      if (counts[i] > 0) {
        logits[i] -= sampling.frequencyPenalty() * counts[i] + sampling.presencePenalty();
      }
    }
    int chosen = sampling.temperature() == 0 ? argmax(logits) : nucleus(logits);
    counts[chosen]++;
    return chosen;
  }

  private int draw(double[] weights, double sum) {
    double draw = random.nextDouble() * sum;
    for (int i = 0; i < weights.length; i++) {
      draw -= weights[i];
      if (draw <= 0) {
        return i;
      }
    }
    return weights.length - 1;
  }

  private static int argmax(double[] logits) {
    int best = 0;
    for (int i = 1; i < logits.length; i++) {
      if (logits[i] > logits[best]) {
        best = i;
      }
    }
    return best;
  }

  private int nucleus(double[] logits) {
    double max = Arrays.stream(logits).max().orElse(0);
    double[] weights = new double[logits.length];
    double sum = 0;
    for (int i = 0; i < logits.length; i++) {
      weights[i] = Math.exp((logits[i] - max) / sampling.temperature());
      sum += weights[i];
    }
    if (sampling.topP() >= 1) {
      return draw(weights, sum); // the whole distribution: no need to sort a vocabulary per token
    }
    Integer[] order = new Integer[logits.length];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(weights[b], weights[a]));
    // Keep the most likely tokens until their mass reaches top_p (at least one), then draw among
    // them.
    double kept = 0;
    int size = 0;
    while (size < order.length && (size == 0 || kept / sum < sampling.topP())) {
      kept += weights[order[size++]];
    }
    double draw = random.nextDouble() * kept;
    for (int i = 0; i < size; i++) {
      draw -= weights[order[i]];
      if (draw <= 0) {
        return order[i];
      }
    }
    return order[size - 1];
  }
}
