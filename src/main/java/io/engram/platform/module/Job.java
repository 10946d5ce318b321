package io.engram.platform.module;

import java.time.Duration;

/**
 * A domain's periodic work, declared by its {@link Module}: run after {@code firstRun}, then again
 * {@code period} after each run ends (a slow run never overlaps the next). A run that throws is
 * logged and counted; the schedule goes on.
 *
 * @param name what the work does, in the words of the log line "could not {name}"
 */
public record Job(String name, Duration firstRun, Duration period, Runnable work) {
  public Job {
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("a job's period must be positive: " + name);
    }
  }

  /** A job whose first run comes one period after start. */
  public static Job every(Duration period, String name, Runnable work) {
    return new Job(name, period, period, work);
  }
}
