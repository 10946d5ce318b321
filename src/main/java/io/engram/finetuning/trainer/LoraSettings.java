package io.engram.finetuning.trainer;

import java.util.List;
import java.util.Set;

/**
 * A LoRA adapter's shape: each targeted projection W (out x in) gains B (out x r) times A (r x
 * in), scaled by alpha / r, with dropout on the adapter's input while training.
 */
public record LoraSettings(int rank, double alpha, double dropout, List<String> targets) {
  public static final Set<String> MODULES =
      Set.of("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj");
  public static final LoraSettings DEFAULT =
      new LoraSettings(8, 16, 0.05, List.of("q_proj", "k_proj", "v_proj", "o_proj"));

  public LoraSettings {
    targets = List.copyOf(targets);
    if (rank < 1 || rank > 256) {
      throw new IllegalArgumentException("rank must be between 1 and 256");
    }
    if (!(alpha > 0) || alpha > 4096) {
      throw new IllegalArgumentException("alpha must be above 0 and at most 4096");
    }
    if (!(dropout >= 0) || dropout >= 1) {
      throw new IllegalArgumentException("dropout must be at least 0 and below 1");
    }
    if (targets.isEmpty() || !MODULES.containsAll(targets)) {
      throw new IllegalArgumentException("target modules must be some of " + MODULES);
    }
  }

  public float scale() {
    return (float) (alpha / rank);
  }
}
