package io.engram.memory;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.List;
import org.jdbi.v3.core.Handle;

/**
 * The memory change log: one entry per change to a memory, appended in the transaction that made
 * it. Each node's index follows it to see the writes of the others (and its own after a restart).
 */
public final class ChangeLog {

  /** One entry of the change log. */
  public record Change(long seq, String memoryId, Instant changedAt) {}

  private final Database db;

  public ChangeLog(Database db) {
    this.db = db;
  }

  /** Appends to the change log, in the transaction that made the change; returns the entry's position. */
  public long append(Handle h, String memoryId, Instant at) {
    return h.createUpdate("INSERT INTO memory_changes (memory_id, changed_at) VALUES (:id, :at)")
        .bind("id", memoryId)
        .bind("at", at.toEpochMilli())
        .executeAndReturnGeneratedKeys("seq")
        .mapTo(Long.class)
        .one();
  }

  /** Changes after {@code seq}, plus any logged since {@code since} (which covers late commits). */
  public List<Change> since(long seq, Instant since) {
    return db.read(h -> h.createQuery("""
            SELECT seq, memory_id, changed_at FROM memory_changes
            WHERE seq > :seq OR changed_at >= :since ORDER BY seq""")
        .bind("seq", seq)
        .bind("since", since.toEpochMilli())
        .map((rs, ctx) -> new Change(
            rs.getLong("seq"), rs.getString("memory_id"), Rows.instant(rs, "changed_at")))
        .list());
  }

  public long lastSeq() {
    return db.read(h -> h.createQuery("SELECT COALESCE(MAX(seq), 0) FROM memory_changes")
        .mapTo(Long.class)
        .one());
  }
}
