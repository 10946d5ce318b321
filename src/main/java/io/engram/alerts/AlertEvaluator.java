package io.engram.alerts;

import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.io.VolumeMeter;
import io.engram.platform.metrics.TrafficMeter;
import io.engram.settings.ConfigField;
import io.engram.settings.OrganizationConfigs;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Takes each organization's measurements, applies {@link AlertRules}, opens and resolves alerts,
 * and tells the organization's channels. Runs on a schedule (every 15 seconds by default, so an
 * alert fires within a minute of its condition). The organizations looked at are those with
 * traffic or connections on this node in the last hour, those with a firing alert, and, on the
 * one node that holds the evaluation's lease at a time, every organization with an alert channel
 * or anything stored: their storage, backups and other conditions are watched with no traffic
 * (and from the first round after a start, not the first request).
 */
public final class AlertEvaluator {
  static final Duration RECENT = Duration.ofMinutes(5);
  static final int TRAILING_WINDOWS = 11;

  private final OrganizationStore organizations;
  private final OrganizationConfigs configs;
  private final ConnectionOwners connections;
  private final TrafficMeter traffic;
  private final Supplier<Optional<VolumeMeter.Load>> volume;
  private final Function<Organization, AlertRules.Storage> storage;
  private final AlertStore alerts;
  private final AlertNotifier notifier;
  private final MeterRegistry registry;
  private final Clock clock;
  private final Map<String, AtomicReference<Double>> gauges = new ConcurrentHashMap<>();
  private long lastTickNanos = System.nanoTime();
  /** Whether this node does the round over every organization now (it holds the lease). */
  private BooleanSupplier watchesEveryone = () -> false;
  /** Every organization to watch without traffic: alert channels, stored data. */
  private Supplier<Set<String>> everyone = Set::of;

  public AlertEvaluator(
      OrganizationStore organizations,
      OrganizationConfigs configs,
      ConnectionOwners connections,
      TrafficMeter traffic,
      Function<Organization, AlertRules.Storage> storage,
      Supplier<Optional<VolumeMeter.Load>> volume,
      AlertStore alerts,
      AlertNotifier notifier,
      MeterRegistry registry,
      Clock clock) {
    this.organizations = organizations;
    this.configs = configs;
    this.connections = connections;
    this.traffic = traffic;
    this.storage = storage;
    this.volume = volume;
    this.alerts = alerts;
    this.notifier = notifier;
    this.registry = registry;
    this.clock = clock;
  }

  /**
   * Watches {@code organizations} too, in the rounds where {@code onThisNode} says this node is
   * the one (a lease across nodes).
   */
  void watchAlso(Supplier<Set<String>> organizations, BooleanSupplier onThisNode) {
    this.everyone = organizations;
    this.watchesEveryone = onThisNode;
  }

  /** One evaluation of every organization in view. */
  public synchronized void tick() {
    long now = System.nanoTime();
    double seconds = Math.max(0.001, (now - lastTickNanos) / 1e9);
    lastTickNanos = now;
    Map<String, Long> bytes = connections.sampleBytes();
    // The volume is the node's, shared by every organization: sampled once a tick.
    Optional<VolumeMeter.Load> load = volume.get();
    load.ifPresent(this::publishVolume);
    Set<String> inView = new HashSet<>(traffic.organizations());
    inView.addAll(bytes.keySet());
    alerts.firing().forEach(alert -> inView.add(alert.orgId()));
    if (watchesEveryone.getAsBoolean()) {
      inView.addAll(everyone.get());
    }
    for (String orgId : inView) {
      Optional<Organization> org = organizations.find(orgId);
      if (org.isEmpty()) {
        continue;
      }
      AlertRules.Measurements measured = new AlertRules.Measurements(
          org.get().plan(),
          bytes.getOrDefault(orgId, 0L) / seconds,
          connections.open(orgId),
          configs.effective(org.get()).count(ConfigField.MAX_CONNECTIONS),
          traffic.last(orgId, RECENT),
          traffic.history(orgId, RECENT, TRAILING_WINDOWS),
          storage.apply(org.get()),
          load);
      publish(orgId, measured);
      AlertRules.evaluate(measured).forEach((kind, condition) -> apply(orgId, kind, condition));
    }
  }

  /**
   * A condition measured elsewhere, such as a backup's outcome: fired, or resolved when it no
   * longer holds, as the evaluated ones are.
   */
  public synchronized void report(
      String orgId, AlertKind kind, boolean holds, double value, String message) {
    apply(orgId, kind, new AlertRules.Condition(holds, value, 0, message));
  }

  /**
   * A condition told as events (a guardrail's block): the firing alert of the kind, if any, ends
   * without a notice, and a new one fires and is notified.
   */
  public synchronized void renew(String orgId, AlertKind kind, double value, String message) {
    alerts.resolve(orgId, kind, clock.instant());
    apply(orgId, kind, new AlertRules.Condition(true, value, 0, message));
  }

  private void apply(String orgId, AlertKind kind, AlertRules.Condition condition) {
    Optional<Alert> changed = condition.holds()
        ? alerts.fire(
            orgId,
            kind,
            condition.value(),
            condition.threshold(),
            condition.message(),
            clock.instant())
        : alerts.resolve(orgId, kind, clock.instant());
    gauge("engram.alert.active", orgId, kind.id()).set(condition.holds() ? 1.0 : 0.0);
    changed.ifPresent(notifier::notify);
  }

  /** The measurements behind the alerts, in /metrics, per organization. */
  private void publish(String orgId, AlertRules.Measurements measured) {
    gauge("engram.organization.connections", orgId, null).set((double) measured.openConnections());
    gauge("engram.organization.bandwidth.bytes.per.second", orgId, null)
        .set(measured.bytesPerSecond());
    gauge("engram.organization.error.rate", orgId, null)
        .set(measured.lastFiveMinutes().errorRate());
    gauge("engram.organization.requests.five.minutes", orgId, null)
        .set((double) measured.lastFiveMinutes().requests());
    gauge("engram.organization.storage.bytes", orgId, null)
        .set((double) measured.storage().stored());
    measured
        .storage()
        .allowance()
        .ifPresent(bytes ->
            gauge("engram.organization.storage.allowance.bytes", orgId, null).set((double) bytes));
  }

  private void publishVolume(VolumeMeter.Load load) {
    volumeGauge("engram.storage.volume.busy.ratio", null).set(load.busyShare());
    volumeGauge("engram.storage.volume.iops", "read").set(load.readIops());
    volumeGauge("engram.storage.volume.iops", "write").set(load.writeIops());
    volumeGauge("engram.storage.volume.bytes.per.second", "read").set(load.readBytes());
    volumeGauge("engram.storage.volume.bytes.per.second", "write").set(load.writeBytes());
  }

  /** A gauge of the storage volume (the node's, no organization), by operation when given. */
  private AtomicReference<Double> volumeGauge(String name, String op) {
    return gauges.computeIfAbsent(name + "|volume|" + op, key -> {
      AtomicReference<Double> holder = new AtomicReference<>(0.0);
      Gauge.Builder<AtomicReference<Double>> builder = Gauge.builder(
              name, holder, AtomicReference::get)
          .description("The instances' storage volume over the last alert interval");
      if (op != null) {
        builder.tag("op", op);
      }
      builder.register(registry);
      return holder;
    });
  }

  private AtomicReference<Double> gauge(String name, String orgId, String kind) {
    return gauges.computeIfAbsent(name + "|" + orgId + "|" + kind, key -> {
      AtomicReference<Double> holder = new AtomicReference<>(0.0);
      Gauge.Builder<AtomicReference<Double>> builder =
          Gauge.builder(name, holder, AtomicReference::get).tag("organization", orgId);
      if (kind != null) {
        builder.tag("kind", kind);
      }
      builder.register(registry);
      return holder;
    });
  }
}
