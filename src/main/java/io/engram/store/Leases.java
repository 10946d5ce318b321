package io.engram.store;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

/**
 * Leases on work that one node at a time does for every node (a row per lease in
 * {@code node_leases}): a node holds a lease while it renews it within its duration; when the
 * holder stops, another takes it once it lapsed. One statement takes or renews it, on SQLite and
 * PostgreSQL alike.
 */
public final class Leases {
  private final Database db;
  private final Clock clock;
  /** This node, as lease rows name it (a process: a restarted node is a new holder). */
  private final String node = "node-" + UUID.randomUUID();

  public Leases(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Takes or renews {@code name} for {@code duration}; whether this node holds it now. */
  public boolean hold(String name, Duration duration) {
    long now = clock.millis();
    int taken = db.write(h -> h.createUpdate("""
            INSERT INTO node_leases (name, holder, expires_at) VALUES (:name, :node, :until)
            ON CONFLICT (name) DO UPDATE SET holder = excluded.holder,
              expires_at = excluded.expires_at
            WHERE node_leases.holder = excluded.holder OR node_leases.expires_at < :now""")
        .bind("name", name)
        .bind("node", node)
        .bind("until", now + duration.toMillis())
        .bind("now", now)
        .execute());
    return taken == 1;
  }
}
