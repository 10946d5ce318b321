package io.engram.memory.erasure;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.PreparedBatch;

/** SQL for erasures: the job's row, its lease, and the memories each erased. */
final class ErasureStore {

  /** An erasure as stored. {@code receipt}: the progress so far while running, then the receipt. */
  record Row(
      String id,
      String orgId,
      String agent,
      String endUser,
      String selectorJson,
      String status,
      String reason,
      String credentialId,
      Instant requestedAt,
      Instant completedAt,
      Instant leaseUntil,
      String receiptJson,
      String error) {}

  static final String RUNNING = "running";
  static final String COMPLETED = "completed";

  private static final RowMapper<Row> ROW = (rs, ctx) -> new Row(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("agent"),
      rs.getString("end_user_id"),
      rs.getString("selector"),
      rs.getString("status"),
      rs.getString("reason"),
      rs.getString("credential_id"),
      Rows.instant(rs, "requested_at"),
      Rows.nullableInstant(rs, "completed_at"),
      Rows.instant(rs, "lease_until"),
      rs.getString("receipt"),
      rs.getString("error"));

  private final Database db;

  ErasureStore(Database db) {
    this.db = db;
  }

  void insert(Row row) {
    db.write(h -> h.createUpdate("""
            INSERT INTO memory_erasures (id, org_id, agent, end_user_id, selector, status, reason,
                                         credential_id, requested_at, lease_until)
            VALUES (:id, :org, :agent, :endUser, :selector, :status, :reason, :credential,
                    :requestedAt, :leaseUntil)""")
        .bind("id", row.id())
        .bind("org", row.orgId())
        .bind("agent", row.agent())
        .bind("endUser", row.endUser())
        .bind("selector", row.selectorJson())
        .bind("status", row.status())
        .bind("reason", row.reason())
        .bind("credential", row.credentialId())
        .bind("requestedAt", row.requestedAt().toEpochMilli())
        .bind("leaseUntil", row.leaseUntil().toEpochMilli())
        .execute());
  }

  Optional<Row> find(String orgId, String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM memory_erasures WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map(ROW)
            .findOne());
  }

  /** Running erasures whose lease ran out (their node stopped or died): to take over. */
  List<Row> abandoned(Instant now) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM memory_erasures WHERE status = :running AND lease_until < :now"
                + " ORDER BY requested_at LIMIT 20")
        .bind("running", RUNNING)
        .bind("now", now.toEpochMilli())
        .map(ROW)
        .list());
  }

  /**
   * Takes a running erasure for this node until {@code until} when its lease is still the one
   * read ({@code seen}): of two nodes that both found it abandoned, one gets it.
   */
  boolean claim(String id, Instant seen, Instant until) {
    return db.write(h -> h.createUpdate("UPDATE memory_erasures SET lease_until = :until"
                + " WHERE id = :id AND status = :running AND lease_until = :seen")
            .bind("until", until.toEpochMilli())
            .bind("id", id)
            .bind("running", RUNNING)
            .bind("seen", seen.toEpochMilli())
            .execute())
        == 1;
  }

  /** Keeps the lease and records the progress so far (and the last failure, if any). */
  void progress(String id, Instant until, String progressJson, String error) {
    db.write(h -> h.createUpdate("UPDATE memory_erasures SET lease_until = :until,"
            + " receipt = :progress, error = :error WHERE id = :id AND status = :running")
        .bind("until", until.toEpochMilli())
        .bind("progress", progressJson)
        .bind("error", error)
        .bind("id", id)
        .bind("running", RUNNING)
        .execute());
  }

  void complete(String id, String receiptJson, Instant at) {
    db.write(h -> h.createUpdate("UPDATE memory_erasures SET status = :completed,"
            + " receipt = :receipt, completed_at = :at, error = NULL WHERE id = :id")
        .bind("completed", COMPLETED)
        .bind("receipt", receiptJson)
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute());
  }

  /** Notes, in the caller's transaction, that this erasure erased these memories. */
  void erased(Handle h, String erasureId, Collection<String> memoryIds) {
    PreparedBatch batch = h.prepareBatch(
        "INSERT INTO memory_erasure_items (erasure_id, memory_id) VALUES (:erasure, :memory)");
    memoryIds.forEach(id -> batch.bind("erasure", erasureId).bind("memory", id).add());
    batch.execute();
  }

  /** The memories an erasure erased, in id order. */
  List<String> erasedBy(String erasureId) {
    return db.read(h -> h.createQuery("SELECT memory_id FROM memory_erasure_items"
            + " WHERE erasure_id = :erasure ORDER BY memory_id")
        .bind("erasure", erasureId)
        .mapTo(String.class)
        .list());
  }
}
