package io.engram.memory;

import io.engram.platform.WireNames;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * SQL for what happened to each memory: its transitions (the state machine's audit trail, what
 * provenance shows) and its uses (encoded, retrieved, reinforced, drawn on by an answer), the
 * tables {@code memory_transitions} and {@code memory_uses}. Methods taking a {@link Handle} run
 * inside the caller's transaction, so a memory and its history are always written together.
 */
public final class MemoryHistory {
  private static final RowMapper<Transition> TRANSITION = (rs, ctx) -> new Transition(
      rs.getString("memory_id"),
      rs.getString("from_state") == null
          ? null
          : MemoryState.fromId(rs.getString("from_state")).orElseThrow(),
      MemoryState.fromId(rs.getString("to_state")).orElseThrow(),
      rs.getString("action"),
      rs.getString("reason"),
      rs.getString("actor"),
      rs.getString("credential_id"),
      rs.getString("user_id"),
      rs.getString("request_id"),
      Rows.instant(rs, "at"));

  private final Database db;

  public MemoryHistory(Database db) {
    this.db = db;
  }

  /** Every use of a memory, its own and those merged into it. */
  public List<UseHistory.Use> uses(Handle h, String memoryId) {
    return h.createQuery("SELECT kind, used_at FROM memory_uses WHERE memory_id = :id")
        .bind("id", memoryId)
        .map((rs, ctx) -> new UseHistory.Use(
            WireNames.parse(UseKind.class, rs.getString("kind")).orElseThrow(),
            Rows.instant(rs, "used_at")))
        .list();
  }

  /** How many uses of this kind the memory has (its own and those merged into it). */
  public long useCount(String memoryId, UseKind kind) {
    return db.read(h -> h.createQuery(
            "SELECT COUNT(*) FROM memory_uses WHERE memory_id = :id AND kind = :kind")
        .bind("id", memoryId)
        .bind("kind", kind.id())
        .mapTo(Long.class)
        .one());
  }

  /** Copies every use of {@code from} onto {@code to}, marked as merged from {@code from}. */
  public int copyUses(Handle h, String from, String to) {
    return h.createUpdate("""
            INSERT INTO memory_uses (memory_id, kind, used_at, request_id, merged_from)
            SELECT :to, kind, used_at, request_id, :from FROM memory_uses WHERE memory_id = :from""").bind("from", from).bind("to", to).execute();
  }

  /** Takes back the copies {@link #copyUses} made. */
  public int removeMergedUses(Handle h, String from, String to) {
    return h.createUpdate("DELETE FROM memory_uses WHERE memory_id = :to AND merged_from = :from")
        .bind("from", from)
        .bind("to", to)
        .execute();
  }

  public void recordTransition(Handle h, Transition t) {
    h.createUpdate("""
            INSERT INTO memory_transitions (memory_id, from_state, to_state, action, reason, actor, credential_id,
                                            user_id, request_id, at)
            VALUES (:memory, :from, :to, :action, :reason, :actor, :credential, :user, :request, :at)""")
        .bind("memory", t.memoryId())
        .bind("from", t.from() == null ? null : t.from().id())
        .bind("to", t.to().id())
        .bind("action", t.action())
        .bind("reason", t.reason())
        .bind("actor", t.actor())
        .bind("credential", t.credentialId())
        .bind("user", t.userId())
        .bind("request", t.requestId())
        .bind("at", t.at().toEpochMilli())
        .execute();
  }

  public List<Transition> transitions(String memoryId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM memory_transitions WHERE memory_id = :id ORDER BY seq")
            .bind("id", memoryId)
            .map(TRANSITION)
            .list());
  }

  /** The transitions of each of {@code ids}, in order: an export's page of provenance. */
  public Map<String, List<Transition>> transitions(Collection<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    Map<String, List<Transition>> byMemory = new java.util.HashMap<>();
    db.read(h -> h.createQuery(
                "SELECT * FROM memory_transitions WHERE memory_id IN (<ids>) ORDER BY seq")
            .bindList("ids", List.copyOf(ids))
            .map(TRANSITION)
            .list())
        .forEach(
            t -> byMemory.computeIfAbsent(t.memoryId(), id -> new ArrayList<>()).add(t));
    return byMemory;
  }

  public void recordUse(Handle h, String memoryId, UseKind kind, Instant at, String requestId) {
    recordUses(h, List.of(new UseRow(memoryId, kind, at, requestId)));
  }

  /** One use of a memory, as the audit table keeps it. */
  public record UseRow(String memoryId, UseKind kind, Instant at, String requestId) {}

  /** Appends these uses to the audit table, one batch of inserts. */
  public void recordUses(Handle h, List<UseRow> uses) {
    PreparedBatch batch = h.prepareBatch(
        "INSERT INTO memory_uses (memory_id, kind, used_at, request_id) VALUES (:id, :kind, :at, :request)");
    for (UseRow use : uses) {
      batch
          .bind("id", use.memoryId())
          .bind("kind", use.kind().id())
          .bind("at", use.at().toEpochMilli())
          .bind("request", use.requestId())
          .add();
    }
    batch.execute();
  }
}
