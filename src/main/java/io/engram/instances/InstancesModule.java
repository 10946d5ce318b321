package io.engram.instances;

import io.engram.instances.retention.Retention;
import io.engram.instances.snapshots.Backups;
import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.DataClass;
import io.engram.instances.storage.StorageUsage;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.Egress;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.engram.store.ErasureParticipant;
import io.engram.store.OrganizationData;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Instances and their storage as the server runs them: the routes, this node's storage job worker,
 * and the hourly storage charges, retention and backups.
 */
public final class InstancesModule implements Module {
  private static final Logger LOG = LoggerFactory.getLogger(InstancesModule.class);

  private final InstanceServices storage;
  private final OrganizationStore organizations;
  private final OrganizationConfigs configs;
  private final boolean soleNode;
  private final long maxBodyBytes;
  private volatile Backups.Outcomes backupOutcomes = (org, backup) -> {};

  public InstancesModule(
      EngramConfig config,
      Database database,
      SecretBox secrets,
      OrganizationStore organizations,
      OrganizationConfigs configs,
      MeterRegistry registry,
      Egress egress,
      Clock clock) {
    this.storage = InstanceServices.open(
        database,
        secrets,
        config.storage(),
        config.storage().dataDir().resolve("index").resolve("memory"),
        registry,
        egress,
        clock);
    this.organizations = organizations;
    this.configs = configs;
    this.soleNode = !config.storage().usesPostgres();
    this.maxBodyBytes = config.server().maxBodyBytes();
  }

  public InstanceServices services() {
    return storage;
  }

  public StorageUsage usage() {
    return storage.usage();
  }

  public Retention retention() {
    return storage.retention();
  }

  /** What an erasure of memories must also reach here: conversations and files that hold them. */
  public ErasureParticipant erasure() {
    return storage.erasure();
  }

  /** The organizations' conversation history (the gateway keeps its exchanges there). */
  public ConversationHistory history() {
    return storage.history();
  }

  /** How long an organization's retention policies keep conversations (empty: as its plan). */
  public Optional<Duration> conversationsKeptFor(String orgId) {
    return storage.retention().maxAge(orgId, DataClass.CONVERSATION_HISTORY);
  }

  /** Where each automatic backup's outcome goes (the backup alert). */
  public void reportBackupsTo(Backups.Outcomes outcomes) {
    this.backupOutcomes = outcomes;
  }

  /**
   * The other domains' parts of a snapshot (their tables, and how their rows go back), after the
   * instances' own; a restore a stop cut short is finished now, before the server takes requests.
   */
  public void includeInSnapshots(OrganizationData... parts) {
    for (OrganizationData part : parts) {
      storage.snapshots().include(part);
    }
    int resumed = storage.snapshots().resumeInterrupted(organizations::get);
    if (resumed > 0) {
      LOG.info("finished {} restores a stop had interrupted", resumed);
    }
  }

  @Override
  public String name() {
    return "instances";
  }

  @Override
  public void register(Routes routes) {
    for (RouteModule module : storage.routes(configs, maxBodyBytes)) {
      module.register(routes);
    }
  }

  /** Storage bought beyond the plan is charged per day (hourly keeps each day's line current). */
  @Override
  public List<Job> jobs() {
    return List.of(
        new Job(
            "storage charges and retention",
            Duration.ofMinutes(1),
            Duration.ofHours(1),
            this::hourly),
        storage.runner().leaseRenewal());
  }

  /** Storage charges, retention and due backups, now (the hourly job; tests call it). */
  public void hourly() {
    storage.hourly(organizations, backupOutcomes);
  }

  /**
   * This node's storage job worker; without another node on the database, jobs a stop interrupted
   * are taken up at once.
   */
  @Override
  public void start() {
    storage.startJobs(organizations::get, soleNode);
  }

  @Override
  public void close() {
    storage.runner().close();
  }
}
