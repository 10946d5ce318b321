package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.http.Bandwidth;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Each organization's bandwidth on this node: its plan's rate ({@link
 * io.engram.organizations.Plan#bandwidthBytesPerSecond}) sustained, with bursts of twice that rate
 * for up to five minutes, shared by all its connections and streams, in and out. Two schedules (the
 * generic cell rate algorithm): the peak one at twice the rate with a few milliseconds of slack,
 * the sustained one at the rate with five minutes of slack; each chunk of bytes reserves its place
 * on both and waits until both allow it. With several nodes each enforces its own share (a
 * client's connections usually spread over them), as the limits do while Redis is away. Plans
 * whose bandwidth the spec leaves to the deployment (Boost and above) get ENGRAM_BANDWIDTH_MBPS,
 * or no limit when the operator set none.
 */
final class Bandwidths {
  /** How long a burst of twice the rate may last. */
  static final Duration BURST = Duration.ofMinutes(5);
  /** The slack of the peak schedule: chunks of a few dozen kilobytes pass without a wait each. */
  private static final long PEAK_SLACK_NANOS = Duration.ofMillis(20).toNanos();

  private final Map<String, Throttle> throttles = new ConcurrentHashMap<>();
  private final io.micrometer.core.instrument.MeterRegistry registry;
  private final java.util.OptionalLong deploymentRate;

  Bandwidths(io.micrometer.core.instrument.MeterRegistry registry, java.util.OptionalInt mbps) {
    this.registry = registry;
    this.deploymentRate = mbps.isPresent()
        ? java.util.OptionalLong.of(mbps.getAsInt() * 1_000_000L / 8)
        : java.util.OptionalLong.empty();
  }

  /** The organization's throttle, or null when neither its plan nor the deployment limits it. */
  Bandwidth.Throttle of(Organization org) {
    java.util.OptionalLong planned = org.plan().bandwidthBytesPerSecond();
    java.util.OptionalLong rate = planned.isPresent() ? planned : deploymentRate;
    if (rate.isEmpty()) {
      return null;
    }
    Throttle current = throttles.get(org.id());
    if (current != null && current.rate == rate.getAsLong()) {
      return current; // the request path: a lookup, no lock
    }
    // A plan change gives the organization a new rate (and a fresh schedule).
    return throttles.compute(org.id(), (id, known) -> {
      if (known != null && known.rate == rate.getAsLong()) {
        return known;
      }
      Throttle fresh = new Throttle(rate.getAsLong());
      if (known == null) {
        // What went through the organization's limit, and how long it made its streams wait.
        io.micrometer.core.instrument.FunctionCounter.builder(
                "engram_bandwidth_bytes", throttles, t -> t.get(id).bytes.doubleValue())
            .description("Bytes in and out of the organization's connections, under its limit")
            .tag("organization", id)
            .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder(
                "engram_bandwidth_waited_seconds",
                throttles,
                t -> t.get(id).waitedNanos.doubleValue() / 1e9)
            .description("Time the organization's streams waited for its bandwidth")
            .tag("organization", id)
            .register(registry);
      }
      return fresh;
    });
  }

  static final class Throttle implements Bandwidth.Throttle {
    final long rate;
    private final double nanosPerBytePeak;
    private final double nanosPerByteSustained;
    private final long sustainedSlackNanos;
    /** When the schedules are next free (long ago: a new throttle starts with its full burst). */
    private long peakDue = Long.MIN_VALUE / 4;

    private long sustainedDue = Long.MIN_VALUE / 4;

    Throttle(long bytesPerSecond) {
      this.rate = bytesPerSecond;
      this.nanosPerBytePeak = 1e9 / (2.0 * bytesPerSecond);
      this.nanosPerByteSustained = 1e9 / bytesPerSecond;
      this.sustainedSlackNanos = BURST.toNanos();
    }

    final java.util.concurrent.atomic.LongAdder bytes = new java.util.concurrent.atomic.LongAdder();
    final java.util.concurrent.atomic.LongAdder waitedNanos =
        new java.util.concurrent.atomic.LongAdder();

    @Override
    public void take(long count) {
      bytes.add(count);
      long wait = reserve(count, System.nanoTime());
      if (wait > 0) {
        waitedNanos.add(wait);
        LockSupport.parkNanos(wait);
      }
    }

    /** Reserves the bytes' place on both schedules; how long to wait before sending them. */
    synchronized long reserve(long bytes, long now) {
      peakDue = Math.max(peakDue, now) + (long) (bytes * nanosPerBytePeak);
      sustainedDue = Math.max(sustainedDue, now) + (long) (bytes * nanosPerByteSustained);
      return Math.max(peakDue - PEAK_SLACK_NANOS - now, sustainedDue - sustainedSlackNanos - now);
    }
  }
}
