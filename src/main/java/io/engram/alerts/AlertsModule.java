package io.engram.alerts;

import io.engram.instances.InstancesModule;
import io.engram.instances.retention.Retention;
import io.engram.instances.snapshots.Backups;
import io.engram.network.Network;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.Routes;
import io.engram.platform.io.VolumeMeter;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * Alerts: the conditions evaluated on a schedule, the webhook channels they are delivered on, their
 * routes, and the conditions other domains report (a backup's outcome, retention that could not
 * export, a certificate near its end), each worded here.
 */
public final class AlertsModule implements Module {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AlertsModule.class);
  private final AlertStore store;
  /** Why the iops alert cannot be measured on this host, or null when it can. */
  private final String iopsUnmeasured;

  private final AlertChannels channels;
  private final WebhookSender webhooks;
  private final AlertEvaluator evaluator;
  private final EngramConfig config;
  private final Clock clock;
  private final List<ToLongFunction<String>> storedElsewhere = new CopyOnWriteArrayList<>();

  public AlertsModule(
      EngramConfig config,
      Database database,
      SecretBox secrets,
      OrganizationStore organizationStore,
      OrganizationConfigs configs,
      ConnectionOwners connections,
      HttpMetrics metrics,
      InstancesModule storage,
      Network network,
      Clock clock) {
    this.config = config;
    this.clock = clock;
    this.store = new AlertStore(database);
    Optional<VolumeMeter> volume = VolumeMeter.of(config.storage().instancesDir());
    this.iopsUnmeasured = volume.isPresent()
        ? null
        : "no block-device counters for " + config.storage().instancesDir()
            + " (tmpfs, an overlay without a device, or not Linux): the iops alert cannot fire"
            + " on this host";
    if (iopsUnmeasured != null) {
      LOG.warn("alerts: {}", iopsUnmeasured);
    }
    this.channels = new AlertChannels(database, secrets, clock);
    this.webhooks =
        new WebhookSender(channels, clock, config.monitoring().webhookRetry(), network.egress());
    this.evaluator = new AlertEvaluator(
        organizationStore,
        configs,
        connections,
        metrics.traffic(),
        // Everything the organization keeps counts against its allowance: instance files,
        // conversation history and memory vectors, and what other domains keep (models).
        org -> new AlertRules.Storage(
            storage.usage().kept(org.id())
                + storedElsewhere.stream()
                    .mapToLong(bytes -> bytes.applyAsLong(org.id()))
                    .sum(),
            storage.usage().limits(org).bytes()),
        // The iops alert: the block device under the instances' files, as the kernel counts it.
        volume
            .<Supplier<Optional<VolumeMeter.Load>>>map(meter -> meter::sample)
            .orElse(Optional::empty),
        store,
        new AlertNotifier(channels, webhooks, clock),
        metrics.registry(),
        clock);
    // One node at a time watches every organization that has a channel or keeps anything; the
    // lease outlives a missed round or two, so a stopped node's share moves within a minute.
    io.engram.store.Leases leases = new io.engram.store.Leases(database, clock);
    java.time.Duration held = config.monitoring().alertInterval().multipliedBy(3);
    // Who keeps anything reads every stored row's organization: looked up once a minute, not
    // every round (one that starts keeping data meanwhile is in view by its traffic). Channels
    // are few and read each round, so a new channel is watched at once.
    java.util.function.Supplier<java.util.Set<String>> keeping = keptFor(
        java.time.Duration.ofMinutes(1), clock, () -> storage.usage().organizationsKeeping());
    java.util.function.Supplier<java.util.Set<String>> watched = () -> {
      java.util.Set<String> all = new java.util.HashSet<>(channels.organizations());
      all.addAll(keeping.get());
      return all;
    };
    evaluator.watchAlso(watched, () -> leases.hold("alerts.evaluation", held));
    storage.retention().onViolations(retentionAlerts());
    storage.reportBackupsTo(backupAlerts());
    network.onCertificateExpiry((orgId, expiring, days, message) ->
        evaluator.report(orgId, AlertKind.CERTIFICATE_EXPIRING, expiring, days, message));
  }

  /** {@code read}'s answer, read again once it is older than {@code age} (one caller's thread). */
  private static <T> java.util.function.Supplier<T> keptFor(
      java.time.Duration age, Clock clock, java.util.function.Supplier<T> read) {
    java.util.concurrent.atomic.AtomicReference<java.util.Map.Entry<java.time.Instant, T>> kept =
        new java.util.concurrent.atomic.AtomicReference<>();
    return () -> {
      java.util.Map.Entry<java.time.Instant, T> last = kept.get();
      if (last == null || clock.instant().isAfter(last.getKey().plus(age))) {
        last = java.util.Map.entry(clock.instant(), read.get());
        kept.set(last);
      }
      return last.getValue();
    };
  }

  /**
   * A provider's deployment refused the gateway's key or model ({@code misconfigured}), or answered
   * again: the organization's provider alert fires or resolves.
   */
  public void providerMisconfigured(String orgId, boolean misconfigured, String message) {
    evaluator.report(
        orgId, AlertKind.PROVIDER_MISCONFIGURED, misconfigured, misconfigured ? 1 : 0, message);
  }

  /**
   * Some budget of the organization has spent its limit ({@code spent}) or 80 % of it, or no
   * longer has ({@code holds} false): the budget alert fires or resolves.
   */
  public void budgetReached(
      String orgId, boolean spent, boolean holds, double share, String message) {
    evaluator.report(
        orgId,
        spent ? AlertKind.BUDGET_SPENT : AlertKind.BUDGET_NEARLY_SPENT,
        holds,
        share,
        message);
  }

  /**
   * A guardrail of the organization blocked something (told by the guardrails at most once an
   * hour per guardrail): each is a new guardrail_blocked alert, so its channels hear of each
   * guardrail, not only the first.
   */
  public void guardrailBlocked(String orgId, String message) {
    evaluator.renew(orgId, AlertKind.GUARDRAIL_BLOCKED, 1, message);
  }

  /** No guardrail of the organization blocked for an hour: its alert resolves. */
  public void guardrailsQuiet(String orgId) {
    evaluator.report(
        orgId, AlertKind.GUARDRAIL_BLOCKED, false, 0, "No guardrail blocked for an hour");
  }

  /** Counts what another domain keeps for an organization (bytes) against its storage alert. */
  public AlertsModule countStorage(ToLongFunction<String> bytesByOrganization) {
    storedElsewhere.add(bytesByOrganization);
    return this;
  }

  /** Retention that could not export kept what it would have deleted: the violation alert. */
  private Retention.Violations retentionAlerts() {
    return (org, kept) -> evaluator.report(
        org.id(),
        AlertKind.RETENTION_VIOLATION,
        !kept.isEmpty(),
        kept.size(),
        kept.isEmpty()
            ? "Retention ran with every export and archive written"
            : kept.size() + " items were kept because their export failed; first: "
                + kept.get(0).item() + " (" + kept.get(0).failure() + ")");
  }

  private Backups.Outcomes backupAlerts() {
    return (org, backup) -> {
      boolean complete = backup.status().equals("complete");
      evaluator.report(
          org.id(),
          AlertKind.BACKUP_FAILED,
          !complete,
          complete ? 0 : 1,
          complete
              ? "The automatic backup " + backup.id() + " is complete"
              : "The automatic backup of instance " + backup.instanceId() + " failed: "
                  + backup.error());
    };
  }

  /** The channels alerts are delivered on, which reminders use too. */
  public AlertChannels channels() {
    return channels;
  }

  public WebhookSender webhooks() {
    return webhooks;
  }

  @Override
  public String name() {
    return "alerts";
  }

  @Override
  public void register(Routes routes) {
    new AlertRoutes(store, channels, webhooks, clock, config.server().maxBodyBytes())
        .register(routes);
  }

  @Override
  public java.util.Map<String, Object> readinessNotes() {
    return iopsUnmeasured == null
        ? java.util.Map.of("iops_alerts", java.util.Map.of("status", "ok"))
        : java.util.Map.of(
            "iops_alerts", java.util.Map.of("status", "unavailable", "reason", iopsUnmeasured));
  }

  @Override
  public List<Job> jobs() {
    return List.of(
        Job.every(config.monitoring().alertInterval(), "evaluate alerts", evaluator::tick));
  }
}
