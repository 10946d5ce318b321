package io.engram.instances;

import io.engram.instances.files.FileStore;
import io.engram.instances.files.JobRunner;
import io.engram.instances.files.JobTransfers;
import io.engram.instances.files.StorageJobs;
import io.engram.instances.retention.Retention;
import io.engram.instances.snapshots.Backups;
import io.engram.instances.snapshots.Snapshots;
import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.StorageBilling;
import io.engram.instances.storage.StorageLog;
import io.engram.instances.storage.StoragePermissions;
import io.engram.instances.storage.StorageUsage;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.organizations.Instance;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.UserStore;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.RouteModule;
import io.engram.platform.io.DirectorySize;
import io.engram.platform.net.Egress;
import io.engram.settings.OrganizationConfigs;
import io.engram.store.Database;
import io.engram.store.ErasureParticipant;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Instances and their storage, wired once for the server: stores, usage, history and routes. */
public record InstanceServices(
    InstanceStore instances,
    FileStore files,
    StorageLog log,
    StorageUsage usage,
    StorageBilling billing,
    ConversationHistory history,
    Retention retention,
    StoragePermissions permissions,
    UserStore users,
    Snapshots snapshots,
    Backups backups,
    ObjectStoreConnections stores,
    StorageJobs jobs,
    JobRunner runner,
    MeterRegistry registry) {
  private static final Logger LOG = LoggerFactory.getLogger(InstanceServices.class);

  /**
   * Opens instance storage under {@code filesDir}; {@code indexDir}: the memory index, whose size
   * is shared out as embeddings. At start, deletions a stopped node left half done are finished,
   * and blobs no file points at (an upload cut by a crash) are swept.
   */
  public static InstanceServices open(
      Database db,
      SecretBox secrets,
      EngramConfig.Storage config,
      Path indexDir,
      MeterRegistry registry,
      Egress egress,
      Clock clock) {
    Path filesDir = config.instancesDir();
    InstanceStore instances = new InstanceStore(db, clock);
    StorageLog log = new StorageLog(db, clock);
    StorageUsage usage = new StorageUsage(db, () -> DirectorySize.of(indexDir));
    FileStore files = new FileStore(db, filesDir, usage, log, clock);
    for (Instance deleting : instances.deleting()) {
      files.deleteInstance(deleting.id());
      instances.purge(deleting.id(), OrganizationConfigs::forgetInstance);
    }
    int swept = files.sweep();
    if (swept > 0) {
      LOG.info("removed {} unreferenced blobs left by interrupted uploads", swept);
    }
    ConversationHistory history = new ConversationHistory(db, instances, usage, registry, clock);
    Snapshots snapshots = new Snapshots(db, files, filesDir.resolveSibling("snapshots"), clock);
    snapshots.include(new InstanceData());
    int cut = snapshots.failInterrupted();
    if (cut > 0) {
      LOG.warn("{} snapshots were cut short by a stop: marked failed, their parts removed", cut);
    }
    ObjectStoreConnections stores =
        new ObjectStoreConnections(db, secrets, config.objectStores(), egress, clock);
    StorageJobs jobs = new StorageJobs(db, clock);
    return new InstanceServices(
        instances,
        files,
        log,
        usage,
        new StorageBilling(db, usage, clock),
        history,
        new Retention(db, files, history, log, stores, registry, clock),
        new StoragePermissions(db, clock),
        new UserStore(db),
        snapshots,
        new Backups(db, snapshots, config.backupDir(), config.backupInterval(), clock),
        stores,
        jobs,
        new JobRunner(jobs, new JobTransfers(files, stores, log), files, registry, clock),
        registry);
  }

  /**
   * Starts this node's storage job worker; {@code soleNode}: no other node shares the database,
   * so jobs a stop interrupted are taken up at once; {@code runner().close()} stops it.
   */
  public void startJobs(Function<String, Organization> organizations, boolean soleNode) {
    runner.start(organizations, soleNode);
  }

  /**
   * The hourly storage housekeeping: today's charges of every organization that bought storage
   * (idempotent), then every organization's retention policies.
   */
  public void hourly(OrganizationStore organizations, Backups.Outcomes outcomes) {
    for (String orgId : billing.billed()) {
      billing.accrue(organizations.get(orgId), billing.today());
    }
    for (String orgId : retention.governed()) {
      List<Retention.Outcome> deleted =
          retention.run(organizations.get(orgId), false, "retention", null);
      if (!deleted.isEmpty()) {
        LOG.info("retention deleted {} items of organization {}", deleted.size(), orgId);
      }
    }
    snapshots.expire();
    backups.due(organizations::get, outcomes);
  }

  /** Storage's part of an erasure: the end user's conversation history, and the snapshots. */
  public ErasureParticipant erasure() {
    return new StorageErasure(history, snapshots);
  }

  public List<RouteModule> routes(OrganizationConfigs configs, long maxBodyBytes) {
    return List.of(
        new InstanceRoutes(instances, files, configs, maxBodyBytes),
        new FileRoutes(files, log, instances, permissions, registry),
        new PermissionRoutes(permissions, users, instances, maxBodyBytes),
        new SnapshotRoutes(snapshots, instances, maxBodyBytes),
        new StorageRoutes(usage, billing, maxBodyBytes),
        new RetentionRoutes(retention, stores, maxBodyBytes),
        new ConversationRoutes(history, instances),
        new ObjectStoreRoutes(stores, log, instances),
        new StorageJobRoutes(jobs, runner, files, stores, permissions, instances));
  }
}
