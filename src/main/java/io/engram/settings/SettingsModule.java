package io.engram.settings;

import io.engram.platform.cluster.ChangeSignal;
import io.engram.platform.cluster.Cluster;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import java.time.Duration;
import java.util.List;

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
    if (sharedDatabase && cluster.redis().isPresent()) {
      ChangeSignal changes =
          cluster.keep(new ChangeSignal(cluster.bus(), "engram:settings-changes", configs::forget));
      configs.announceChangesWith(changes::announce);
    }
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
