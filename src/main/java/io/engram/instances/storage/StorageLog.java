package io.engram.instances.storage;

import io.engram.platform.Ids;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.jdbi.v3.core.Handle;

/**
 * Who did what to which path of an instance's storage: every write, read, deletion and refusal,
 * with its bytes and result, readable newest first ({@code GET /v1/nano/{id}/storage/logs}).
 */
public final class StorageLog {
  public static final int MAX_PAGE = 200;

  /** One logged operation. */
  public record Entry(
      String id,
      String instanceId,
      Instant at,
      String actor,
      String action,
      String path,
      Long bytes,
      String result,
      String requestId) {}

  private final Database db;
  private final Clock clock;

  public StorageLog(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Logs an operation in its own transaction (reads and refusals, which write nothing else). */
  public void record(
      String orgId,
      String instanceId,
      String actor,
      String action,
      String path,
      Long bytes,
      String result,
      String requestId) {
    db.write(h -> {
      append(h, orgId, instanceId, actor, action, path, bytes, result, requestId);
      return null;
    });
  }

  /** Logs an operation inside the transaction that made it. */
  public void append(
      Handle h,
      String orgId,
      String instanceId,
      String actor,
      String action,
      String path,
      Long bytes,
      String result,
      String requestId) {
    long now = clock.millis();
    h.createUpdate("""
            INSERT INTO storage_log (id, org_id, instance_id, at, actor, action, path, bytes,
              result, request_id)
            VALUES (:id, :org, :instance, :at, :actor, :action, :path, :bytes, :result, :request)""")
        .bind("id", Ids.newId("slog", now))
        .bind("org", orgId)
        .bind("instance", instanceId)
        .bind("at", now)
        .bind("actor", actor)
        .bind("action", action)
        .bind("path", path)
        .bind("bytes", bytes)
        .bind("result", result)
        .bind("request", requestId)
        .execute();
  }

  /** A page of the instance's log, newest first, before the entry {@code before} when given. */
  public List<Entry> page(String instanceId, String before, int limit) {
    return db.read(h -> h.createQuery("SELECT * FROM storage_log WHERE instance_id = :instance"
            + (before == null ? "" : " AND id < :before")
            + " ORDER BY id DESC LIMIT :limit")
        .bind("instance", instanceId)
        .bindMap(before == null ? java.util.Map.of() : java.util.Map.of("before", before))
        .bind("limit", limit)
        .map((rs, ctx) -> new Entry(
            rs.getString("id"),
            rs.getString("instance_id"),
            Rows.instant(rs, "at"),
            rs.getString("actor"),
            rs.getString("action"),
            rs.getString("path"),
            Rows.nullableLong(rs, "bytes"),
            rs.getString("result"),
            rs.getString("request_id")))
        .list());
  }
}
