package io.engram.actions;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.Query;

/**
 * The audit of capability executions. A tool call id is claimed once per assistant (a unique
 * key): a retried conversation that sends the same call reads the first execution's outcome
 * instead of acting again, even when both arrive at once on different nodes.
 */
public final class Executions {
  private static final RowMapper<Execution> EXECUTION = (rs, ctx) -> new Execution(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("assistant_id"),
      rs.getString("capability_id"),
      rs.getLong("set_version"),
      rs.getString("tool_call_id"),
      Json.read(rs.getString("arguments"), JsonNode.class),
      Execution.Status.fromWire(rs.getString("status")),
      rs.getString("result") == null ? null : Json.read(rs.getString("result"), JsonNode.class),
      rs.getString("reason"),
      rs.getString("credential_id"),
      rs.getString("request_id"),
      Rows.instant(rs, "created_at"),
      rs.getString("decided_by"),
      Rows.nullableInstant(rs, "decided_at"));

  /** Which executions to list, newest first. Null fields do not filter. */
  public record Filter(String assistantId, String capabilityId, Execution.Status status) {}

  private final Database db;

  public Executions(Database db) {
    this.db = db;
  }

  /**
   * Claims the tool call for a new execution (status running); when the call was claimed before,
   * the earlier execution instead.
   */
  Claim claim(Execution execution) {
    return db.write(h -> {
      int inserted = h.createUpdate("""
              INSERT INTO capability_executions (id, org_id, assistant_id, capability_id,
                set_version, tool_call_id, arguments, status, credential_id, request_id,
                created_at)
              VALUES (:id, :org, :assistant, :capability, :version, :call, :arguments, :status,
                :credential, :request, :at)
              ON CONFLICT (org_id, assistant_id, tool_call_id) DO NOTHING""")
          .bind("id", execution.id())
          .bind("org", execution.orgId())
          .bind("assistant", execution.assistantId())
          .bind("capability", execution.capabilityId())
          .bind("version", execution.setVersion())
          .bind("call", execution.toolCallId())
          .bind("arguments", Json.write(execution.arguments()))
          .bind("status", execution.status().wireName())
          .bind("credential", execution.credentialId())
          .bind("request", execution.requestId())
          .bind("at", execution.createdAt().toEpochMilli())
          .execute();
      if (inserted == 1) {
        return new Claim(execution, true);
      }
      Execution earlier = h.createQuery("""
              SELECT * FROM capability_executions
              WHERE org_id = :org AND assistant_id = :assistant AND tool_call_id = :call""")
          .bind("org", execution.orgId())
          .bind("assistant", execution.assistantId())
          .bind("call", execution.toolCallId())
          .map(EXECUTION)
          .one();
      return new Claim(earlier, false);
    });
  }

  /** A claimed execution; {@code fresh} false: the call was claimed before (a replay). */
  record Claim(Execution execution, boolean fresh) {}

  /** Records how an execution ended (or that it waits for approval). */
  void finish(String id, Execution.Status status, JsonNode result, String reason) {
    db.write(h -> h.createUpdate("""
            UPDATE capability_executions SET status = :status, result = :result, reason = :reason
            WHERE id = :id""")
        .bind("id", id)
        .bind("status", status.wireName())
        .bind("result", result == null ? null : Json.write(result))
        .bind("reason", reason)
        .execute());
  }

  /**
   * Moves a pending execution to {@code status} for the person who decided; false when it was not
   * pending any more (someone decided first).
   */
  boolean decide(String orgId, String id, Execution.Status status, String by, Instant at) {
    return db.write(h -> h.createUpdate("""
                UPDATE capability_executions SET status = :status, decided_by = :by,
                  decided_at = :at
                WHERE org_id = :org AND id = :id AND status = 'pending_approval'""")
            .bind("org", orgId)
            .bind("id", id)
            .bind("status", status.wireName())
            .bind("by", by)
            .bind("at", at.toEpochMilli())
            .execute())
        == 1;
  }

  public Optional<Execution> get(String orgId, String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM capability_executions WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map(EXECUTION)
            .findOne());
  }

  /** Newest first, before {@code beforeId} (exclusive, null: from the newest). */
  public List<Execution> list(String orgId, Filter filter, String beforeId, int limit) {
    StringBuilder sql =
        new StringBuilder("SELECT * FROM capability_executions WHERE org_id = :org");
    if (filter.assistantId() != null) {
      sql.append(" AND assistant_id = :assistant");
    }
    if (filter.capabilityId() != null) {
      sql.append(" AND capability_id = :capability");
    }
    if (filter.status() != null) {
      sql.append(" AND status = :status");
    }
    if (beforeId != null) {
      sql.append(" AND id < :before");
    }
    sql.append(" ORDER BY id DESC LIMIT :limit");
    return db.read(h -> {
      Query query = h.createQuery(sql.toString()).bind("org", orgId).bind("limit", limit);
      if (filter.assistantId() != null) {
        query.bind("assistant", filter.assistantId());
      }
      if (filter.capabilityId() != null) {
        query.bind("capability", filter.capabilityId());
      }
      if (filter.status() != null) {
        query.bind("status", filter.status().wireName());
      }
      if (beforeId != null) {
        query.bind("before", beforeId);
      }
      return query.map(EXECUTION).list();
    });
  }
}
