package io.engram.alerts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.engram.organizations.Plan;
import io.engram.platform.io.VolumeMeter;
import io.engram.platform.metrics.TrafficMeter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The iops alert: the kernel's counters of the storage volume are really read (writes with an
 * fsync show up in them), and the rule fires when the volume was busy 90 % of the interval, with
 * the plan's figures beside the measurement.
 */
class IopsAlertTest {
  @TempDir
  Path dir;

  @Test
  void theVolumeMeterSeesWritesReachTheDisk() throws IOException {
    Optional<VolumeMeter> meter = VolumeMeter.of(dir);
    assumeThat(meter)
        .as("no block-device counters under " + dir + " (not Linux, or tmpfs): nothing to measure")
        .isPresent();
    meter.get().sample();
    try (FileChannel file = FileChannel.open(
        dir.resolve("io.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ByteBuffer block = ByteBuffer.allocate(1024 * 1024);
      for (int i = 0; i < 16; i++) {
        block.clear();
        file.write(block);
        file.force(true);
      }
    }
    VolumeMeter.Load load = meter.get().sample().orElseThrow();
    assertThat(load.writeIops()).isPositive();
    assertThat(load.writeBytes()).isGreaterThanOrEqualTo(16.0 * 1024 * 1024 / 60);
    assertThat(load.busyShare()).isBetween(0.0, 1.0);
  }

  private static AlertRules.Measurements measured(Plan plan, Optional<VolumeMeter.Load> volume) {
    return new AlertRules.Measurements(
        plan,
        0,
        0,
        Long.MAX_VALUE,
        new TrafficMeter.Counts(0, 0),
        new long[0],
        new AlertRules.Storage(0, OptionalLong.empty()),
        volume);
  }

  @Test
  void aVolumeBusyNinetyPercentOfTheIntervalFiresTheAlert() {
    AlertRules.Condition saturated = AlertRules.evaluate(
            measured(Plan.SPARK, Optional.of(new VolumeMeter.Load(0.95, 1200, 3400, 5e6, 9e7))))
        .get(AlertKind.IOPS);
    assertThat(saturated.holds()).isTrue();
    assertThat(saturated.value()).isCloseTo(0.05, org.assertj.core.data.Offset.offset(1e-9));
    assertThat(saturated.message())
        .contains("95.0 %")
        .contains("write 3400 IOPS")
        .contains("read 10,000 / write 5,000 IOPS");
    assertThat(AlertRules.evaluate(
                measured(Plan.SPARK, Optional.of(new VolumeMeter.Load(0.4, 100, 100, 1e6, 1e6))))
            .get(AlertKind.IOPS)
            .holds())
        .isFalse();
    assertThat(AlertRules.evaluate(measured(Plan.SPARK, Optional.empty())))
        .doesNotContainKey(AlertKind.IOPS);
  }
}
