package io.engram.instances.snapshots;

import io.engram.organizations.Organization;
import io.engram.store.Database;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

/**
 * Automatic backups: every {@code interval} (6 hours by default) each running instance gets a
 * snapshot written to the operator's backup destination (another volume, ideally), kept 7 days
 * (the spec's), read back against its manifest before it counts. Each outcome is reported, so a
 * failed backup raises the organization's {@code backup_failed} alert and the next good one
 * resolves it.
 */
public final class Backups {
  /** Kept this long, as the spec says. */
  public static final int RETENTION_DAYS = 7;

  /** Where each backup's outcome goes (the alerts). */
  @FunctionalInterface
  public interface Outcomes {
    void backedUp(Organization org, Snapshot snapshot);
  }

  private record Due(String orgId, String instanceId) {}

  private final Database db;
  private final Snapshots snapshots;
  private final Path destination;
  private final Duration interval;
  private final Clock clock;

  public Backups(
      Database db, Snapshots snapshots, Path destination, Duration interval, Clock clock) {
    this.db = db;
    this.snapshots = snapshots;
    this.destination = destination;
    this.interval = interval;
    this.clock = clock;
  }

  /** Backs up every instance whose last automatic backup is older than the interval. */
  public int due(Function<String, Organization> organizations, Outcomes outcomes) {
    Instant cutoff = clock.instant().minus(interval);
    List<Due> due = db.read(h -> h.createQuery("""
            SELECT i.org_id, i.id FROM instances i WHERE i.status = 'running' AND NOT EXISTS (
              SELECT 1 FROM snapshots s WHERE s.instance_id = i.id AND s.kind = 'automatic'
                AND s.created_at > :cutoff)""")
        .bind("cutoff", cutoff.toEpochMilli())
        .map((rs, ctx) -> new Due(rs.getString(1), rs.getString(2)))
        .list());
    for (Due instance : due) {
      Organization org = organizations.apply(instance.orgId());
      Snapshot snapshot = snapshots.take(
          org, instance.instanceId(), "automatic", "automatic backup", RETENTION_DAYS, destination);
      outcomes.backedUp(org, snapshot);
    }
    return due.size();
  }
}
