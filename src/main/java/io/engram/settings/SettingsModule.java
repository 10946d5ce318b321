package io.engram.settings;

import io.engram.platform.cluster.ChangeSignal;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Organizations' settings in force on this node. With a shared database, other nodes change them
 * too: followed through the database within about a second, and at once when Redis carries the
 * news.
 */
public final class SettingsModule implements Module {
  private final OrganizationConfigs configs;
  private final boolean sharedDatabase;

  public SettingsModule(OrganizationConfigs configs, Cluster cluster, boolean sharedDatabase) {
    this.configs = configs;
    this.sharedDatabase = sharedDatabase;
    configs.onResolved(SettingsModule::followLogLevel);
    if (sharedDatabase && cluster.redis().isPresent()) {
      ChangeSignal changes =
          cluster.keep(new ChangeSignal(cluster.bus(), "engram:settings-changes", configs::forget));
      configs.announceChangesWith(changes::announce);
    }
  }

  /**
   * The organization's own LOG_LEVEL (its layer or the operator's override for it) decides what its
   * requests log; the server's level applies to the others. The logging keeps it.
   */
  private static void followLogLevel(String orgId, EffectiveConfig config) {
    EffectiveConfig.Variable level = config.variables().get("LOG_LEVEL");
    OrganizationLogLevels.set(
        orgId,
        level.source() == ConfigField.Source.ORGANIZATION
                || level.source() == ConfigField.Source.RUNTIME
            ? level.value().toLowerCase(Locale.ROOT)
            : null);
  }

  @Override
  public String name() {
    return "settings";
  }

  @Override
  public List<Job> jobs() {
    return sharedDatabase
        ? List.of(Job.every(
            Duration.ofSeconds(1), "follow configuration changes", configs::followChanges))
        : List.of();
  }
}
