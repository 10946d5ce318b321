package io.engram.finetuning.trainer;

import ai.djl.ndarray.NDArray;
import java.util.ArrayList;
import java.util.List;

/**
 * AdamW (decoupled weight decay) over the adapters' parameters, with the global gradient norm
 * clipped first. Its moments are part of a checkpoint, so a resumed job continues the same
 * optimisation rather than restarting its momentum.
 */
public final class AdamW {
  static final double BETA1 = 0.9;
  static final double BETA2 = 0.999;
  static final double EPSILON = 1e-8;
  static final double MAX_GRADIENT_NORM = 1.0;

  private final List<NDArray> parameters;
  private final List<NDArray> first = new ArrayList<>();
  private final List<NDArray> second = new ArrayList<>();
  private final double weightDecay;
  private int steps;

  public AdamW(List<NDArray> parameters, double weightDecay) {
    this.parameters = List.copyOf(parameters);
    this.weightDecay = weightDecay;
    for (NDArray parameter : parameters) {
      first.add(parameter.zerosLike());
      second.add(parameter.zerosLike());
    }
  }

  /**
   * One update with the gradients accumulated so far, which it then clears. Returns the gradient
   * norm; when it is not finite, no update is made.
   */
  public double step(double learningRate) {
    steps++;
    double squares = 0;
    List<NDArray> gradients = new ArrayList<>();
    for (NDArray parameter : parameters) {
      NDArray gradient = parameter.getGradient();
      gradients.add(gradient);
      squares += gradient.square().sum().getFloat();
    }
    double norm = Math.sqrt(squares);
    if (!Double.isFinite(norm)) {
      // an overflow in this step's gradients: the step is skipped rather than poisoning the
      // moments (the trainer counts such steps and stops a run that keeps diverging)
      gradients.forEach(gradient -> gradient.muli(0));
      steps--;
      return norm;
    }
    double clip = norm > MAX_GRADIENT_NORM ? MAX_GRADIENT_NORM / norm : 1.0;
    double correction1 = 1 - Math.pow(BETA1, steps);
    double correction2 = 1 - Math.pow(BETA2, steps);
    for (int i = 0; i < parameters.size(); i++) {
      NDArray gradient = gradients.get(i).mul(clip);
      first.get(i).muli(BETA1).addi(gradient.mul(1 - BETA1));
      second.get(i).muli(BETA2).addi(gradient.square().mul(1 - BETA2));
      NDArray update = first
          .get(i)
          .div(correction1)
          .div(second.get(i).div(correction2).sqrt().add(EPSILON));
      NDArray parameter = parameters.get(i);
      parameter.muli(1 - learningRate * weightDecay);
      parameter.subi(update.mul(learningRate));
      gradients.get(i).muli(0); // PyTorch adds each backward pass to the gradient: cleared here
    }
    return norm;
  }

  public int steps() {
    return steps;
  }

  /** The moments, in parameter order: first moments, then second. */
  public List<NDArray> moments() {
    List<NDArray> all = new ArrayList<>(first);
    all.addAll(second);
    return all;
  }

  /** Continues from a checkpoint: the moments were set in place by the caller. */
  public void resumeAt(int steps) {
    this.steps = steps;
  }
}
