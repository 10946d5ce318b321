package io.engram.alerts;

import io.engram.organizations.Plan;
import io.engram.organizations.Tier;
import io.engram.platform.io.VolumeMeter;
import io.engram.platform.metrics.TrafficMeter;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * When each alert fires, from one organization's measurements. The rules, with their units:
 *
 * <ul>
 *   <li>{@code bandwidth}: bytes per second in and out over the last interval, above 80 % of the
 *       plan's bandwidth (Spark 1 Gbps, Seed and Rise 10 Gbps; the spec leaves the others to the
 *       deployment, so they have no threshold).
 *   <li>{@code connections}: open HTTP connections at or above 90 % of {@code
 *       network.max_connections} in force ("near the maximum").
 *   <li>{@code error_rate}: server errors (5xx, which include the gateway's upstream failures) over
 *       requests in the last five minutes, above 1 %, once there were at least 20 requests.
 *   <li>{@code unusual_traffic}: requests in the last five minutes against the organization's own
 *       trailing hour (the eleven five-minute windows before): above three times their mean and
 *       above their mean plus four standard deviations, with at least 100 requests, once at least
 *       six of those windows saw traffic.
 *   <li>{@code storage}: bytes stored against the plan's storage, above 80 %.
 *   <li>{@code iops}: the block device under the instances' storage busy 90 % or more of the
 *       interval (the kernel's own busy time: less than a tenth of its time left, whatever it can
 *       do), shown beside the plan's IOPS figures (Spark read 10,000 / write 5,000, Seed 50,000 /
 *       25,000; the others are the deployment's). Without such a device (tmpfs, not Linux) there
 *       is no measurement and no condition.
 * </ul>
 */
public final class AlertRules {
  static final double BANDWIDTH_SHARE = 0.8;
  static final double CONNECTION_SHARE = 0.9;
  static final double ERROR_RATE = 0.01;
  static final long MIN_REQUESTS_FOR_RATE = 20;
  static final long MIN_UNUSUAL_REQUESTS = 100;
  static final double STORAGE_SHARE = 0.8;
  static final double BUSY_SHARE = 0.9;
  private static final long GBPS = 1_000_000_000L / 8;

  /** What was measured for one organization at one evaluation. */
  public record Measurements(
      Plan plan,
      double bytesPerSecond,
      int openConnections,
      long maxConnections,
      TrafficMeter.Counts lastFiveMinutes,
      long[] trailingWindows,
      Storage storage,
      Optional<VolumeMeter.Load> volume) {}

  /** The allowance in words: the plan's storage, and what was bought beyond it when anything was. */
  private static String allowance(Measurements m) {
    long plan = m.plan().limits().storageGb().value();
    long gb = Math.round(m.storage().allowance().getAsLong() / 1e9);
    return gb == plan
        ? "the plan's " + plan + " GB"
        : gb + " GB (the plan's " + plan + " GB and what was bought)";
  }

  /** What the organization stores and its allowance in bytes (empty: unlimited). */
  public record Storage(long stored, OptionalLong allowance) {}

  /** An alert's condition now: whether it holds, the value measured and its threshold. */
  public record Condition(boolean holds, double value, double threshold, String message) {}

  private AlertRules() {}

  public static Map<AlertKind, Condition> evaluate(Measurements m) {
    Map<AlertKind, Condition> conditions = new EnumMap<>(AlertKind.class);
    bandwidth(m.plan()).ifPresent(limit -> {
      double threshold = limit * BANDWIDTH_SHARE;
      conditions.put(
          AlertKind.BANDWIDTH,
          new Condition(
              m.bytesPerSecond() > threshold,
              m.bytesPerSecond(),
              threshold,
              "Bandwidth at " + percent(m.bytesPerSecond() / limit) + " of the plan's "
                  + limit * 8 / 1_000_000_000 + " Gbps"));
    });
    if (m.maxConnections() != Long.MAX_VALUE) {
      double threshold = Math.ceil(m.maxConnections() * CONNECTION_SHARE);
      conditions.put(
          AlertKind.CONNECTIONS,
          new Condition(
              m.openConnections() >= threshold,
              m.openConnections(),
              threshold,
              m.openConnections() + " of " + m.maxConnections()
                  + " connections open (network.max_connections)"));
    }
    TrafficMeter.Counts recent = m.lastFiveMinutes();
    conditions.put(
        AlertKind.ERROR_RATE,
        new Condition(
            recent.requests() >= MIN_REQUESTS_FOR_RATE && recent.errorRate() > ERROR_RATE,
            recent.errorRate(),
            ERROR_RATE,
            recent.errors() + " server errors in " + recent.requests()
                + " requests over five minutes (" + percent(recent.errorRate()) + ")"));
    conditions.put(AlertKind.UNUSUAL_TRAFFIC, unusual(recent.requests(), m.trailingWindows()));
    if (m.storage().allowance().isPresent()) {
      double limit = m.storage().allowance().getAsLong();
      double threshold = limit * STORAGE_SHARE;
      long stored = m.storage().stored();
      conditions.put(
          AlertKind.STORAGE,
          new Condition(
              stored > threshold,
              stored,
              threshold,
              "Storage at " + percent(stored / limit) + " of " + allowance(m)));
    }
    m.volume().ifPresent(load -> conditions.put(AlertKind.IOPS, iops(m.plan(), load)));
    return conditions;
  }

  private static Condition iops(Plan plan, VolumeMeter.Load load) {
    String figures = plan.tier() == Tier.SPARK
        ? "; the plan's figures: read 10,000 / write 5,000 IOPS, 1,000 / 500 MB/s"
        : plan.tier() == Tier.SEED
            ? "; the plan's figures: read 50,000 / write 25,000 IOPS, 5,000 / 2,500 MB/s"
            : "";
    return new Condition(
        load.busyShare() >= BUSY_SHARE,
        1 - load.busyShare(),
        1 - BUSY_SHARE,
        String.format(
            java.util.Locale.ROOT,
            "The storage volume was busy %s of the interval (read %.0f IOPS, %.1f MB/s; write"
                + " %.0f IOPS, %.1f MB/s)%s",
            percent(load.busyShare()),
            load.readIops(),
            load.readBytes() / 1e6,
            load.writeIops(),
            load.writeBytes() / 1e6,
            figures));
  }

  private static Condition unusual(long now, long[] trailing) {
    int active = 0;
    double sum = 0;
    for (long count : trailing) {
      sum += count;
      active += count > 0 ? 1 : 0;
    }
    double mean = trailing.length == 0 ? 0 : sum / trailing.length;
    double variance = 0;
    for (long count : trailing) {
      variance += (count - mean) * (count - mean);
    }
    double deviation = trailing.length == 0 ? 0 : Math.sqrt(variance / trailing.length);
    double threshold = Math.max(3 * mean, mean + 4 * deviation);
    boolean holds = active >= 6 && now >= MIN_UNUSUAL_REQUESTS && now > threshold;
    return new Condition(
        holds,
        now,
        threshold,
        now + " requests in five minutes against a trailing mean of " + Math.round(mean));
  }

  private static OptionalLong bandwidth(Plan plan) {
    return plan.bandwidthBytesPerSecond();
  }

  private static String percent(double share) {
    return String.format(java.util.Locale.ROOT, "%.1f %%", share * 100);
  }
}
