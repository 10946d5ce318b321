package io.engram.inference.usage;

/**
 * Request durations kept as counts per bucket, so percentiles over any hours are a sum of counts:
 * bucket {@code i} holds durations up to {@code 1.25^i} ms (bucket 0: up to 1 ms), the last one
 * everything longer (about two minutes and up). A percentile is reported as its bucket's upper
 * bound: at most 25 % above the true value, the price of storing 54 numbers instead of every
 * duration.
 */
public final class LatencyBuckets {
  static final double GROWTH = 1.25;
  static final int COUNT = 54;

  private LatencyBuckets() {}

  /** The bucket of a duration in milliseconds. */
  static int of(double millis) {
    if (millis <= 1) {
      return 0;
    }
    int bucket = (int) Math.ceil(Math.log(millis) / Math.log(GROWTH) - 1e-9);
    return Math.min(bucket, COUNT - 1);
  }

  /** The upper bound of a bucket, in whole milliseconds (the last bucket reports its lower bound). */
  static long upperMillis(int bucket) {
    int bounded = Math.min(bucket, COUNT - 2);
    return Math.round(Math.pow(GROWTH, bounded));
  }

  /** The p-th percentile (0 < p <= 100) of the counts, in ms; null when nothing was counted. */
  static Long percentile(long[] counts, double p) {
    long total = 0;
    for (long c : counts) {
      total += c;
    }
    if (total == 0) {
      return null;
    }
    long rank = (long) Math.ceil(total * p / 100.0);
    long seen = 0;
    for (int i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= rank) {
        return upperMillis(i);
      }
    }
    return upperMillis(counts.length - 1);
  }
}
