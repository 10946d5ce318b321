package io.engram.inference.usage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LatencyBucketsTest {

  @Test
  void aDurationFallsInTheBucketWhoseUpperBoundIsWithinAQuarterAboveIt() {
    for (double ms : new double[] {1.5, 3, 7.7, 42, 120, 999, 12_345, 90_000}) {
      long bound = LatencyBuckets.upperMillis(LatencyBuckets.of(ms));
      assertThat((double) bound).as("%s ms", ms).isBetween(ms - 0.5, ms * 1.25 + 0.5);
    }
    assertThat(LatencyBuckets.of(0.2)).isZero();
    assertThat(LatencyBuckets.of(1e9)).isEqualTo(LatencyBuckets.COUNT - 1);
  }

  @Test
  void percentilesAreTheBucketsWhereTheRankFalls() {
    long[] counts = new long[LatencyBuckets.COUNT];
    counts[LatencyBuckets.of(10)] = 90;
    counts[LatencyBuckets.of(500)] = 9;
    counts[LatencyBuckets.of(4_000)] = 1;
    assertThat(LatencyBuckets.percentile(counts, 50))
        .isEqualTo(LatencyBuckets.upperMillis(LatencyBuckets.of(10)));
    assertThat(LatencyBuckets.percentile(counts, 95))
        .isEqualTo(LatencyBuckets.upperMillis(LatencyBuckets.of(500)));
    assertThat(LatencyBuckets.percentile(counts, 100))
        .isEqualTo(LatencyBuckets.upperMillis(LatencyBuckets.of(4_000)));
    assertThat(LatencyBuckets.percentile(new long[LatencyBuckets.COUNT], 50)).isNull();
  }
}
