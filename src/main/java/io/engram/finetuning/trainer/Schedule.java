package io.engram.finetuning.trainer;

/**
 * The learning rate at each step: a linear warm-up over the first steps, then a linear decay to
 * a tenth of the peak at the last step.
 */
public record Schedule(double peak, int warmupSteps, int totalSteps) {
  public static Schedule of(double peak, int totalSteps) {
    return new Schedule(peak, Math.max(1, (int) Math.ceil(totalSteps * 0.1)), totalSteps);
  }

  /** The rate for step {@code step}, counted from 1. */
  public double at(int step) {
    if (step <= warmupSteps) {
      return peak * step / warmupSteps;
    }
    double progress = (double) (step - warmupSteps) / Math.max(1, totalSteps - warmupSteps);
    return peak * (1 - 0.9 * Math.min(1, progress));
  }
}
