package io.engram.memory;

import java.time.Duration;
import java.time.Instant;

/**
 * ACT-R base-level activation over a memory's uses: {@code B = ln(sum_j w_j * t_j^-d)}, with
 * {@code t_j} the seconds since use j (at least {@link #MIN_AGE_SECONDS}), {@code w_j} the use's
 * weight and {@code d} the decay. Uses older than the exact window are summed with Petrov's
 * (2006) approximation, which assumes they were spread evenly between the first use and the
 * oldest exact one. {@link #normalized} maps B onto (0, 1) with a logistic centred on "one encode a
 * week ago", which is what ranking combines with relevance.
 */
public final class Activation {
  public static final double DECAY = 0.5;
  static final double MIN_AGE_SECONDS = 1.0;
  /** B of a single encode one week ago: such a memory has normalized activation 0.5. */
  static final double CENTER = -DECAY * Math.log(Duration.ofDays(7).toSeconds());

  static final double SCALE = 1.0;

  private Activation() {}

  public static double baseLevel(UseHistory history, Instant now) {
    double sum = 0;
    for (UseHistory.Use use : history.recent()) {
      sum += use.kind().weight() * Math.pow(ageSeconds(use.at(), now), -DECAY);
    }
    if (history.olderCount() > 0) {
      double oldest = ageSeconds(history.firstUseAt(), now);
      double newestOlder = ageSeconds(history.recent().getFirst().at(), now);
      if (oldest - newestOlder < 1) {
        sum += history.olderWeight() * Math.pow(oldest, -DECAY);
      } else {
        sum += history.olderWeight()
            * (Math.pow(oldest, 1 - DECAY) - Math.pow(newestOlder, 1 - DECAY))
            / ((1 - DECAY) * (oldest - newestOlder));
      }
    }
    return Math.log(sum);
  }

  public static double normalized(double baseLevel) {
    return 1 / (1 + Math.exp(-(baseLevel - CENTER) / SCALE));
  }

  private static double ageSeconds(Instant at, Instant now) {
    return Math.max(MIN_AGE_SECONDS, (now.toEpochMilli() - at.toEpochMilli()) / 1000.0);
  }
}
