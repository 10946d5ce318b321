package io.engram.memory;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * What reflection reads of an organization's memories to plan its work, over the whole
 * organization: how many memories each subject has, the memories of some subjects, each memory's
 * vitals (state, confidence, age, uses) and the count in each state.
 */
public final class ReflectionReads {
  private static final RowMapper<MemoryRecord> MEMORY = MemoryStore.MEMORY;

  private final Database db;

  public ReflectionReads(Database db) {
    this.db = db;
  }

  /** How many memories one subject (null: no subject) has. */
  public record SubjectCount(String subject, int count) {}

  /** The distinct subjects of the organization's memories in these states, with counts. */
  public List<SubjectCount> subjects(String orgId, Collection<MemoryState> states) {
    return db.read(
        h -> h.createQuery("SELECT subject, COUNT(*) AS n FROM memories WHERE org_id = :org"
                + " AND state IN (<states>) GROUP BY subject")
            .bind("org", orgId)
            .bindList("states", states.stream().map(MemoryState::id).toList())
            .map((rs, ctx) -> new SubjectCount(rs.getString("subject"), rs.getInt("n")))
            .list());
  }

  /**
   * The organization's memories in these states whose subject is one of {@code subjects} (null
   * meaning "no subject"), after {@code afterId} in id order, at most {@code limit}.
   */
  public List<MemoryRecord> withSubjects(
      String orgId,
      Collection<String> subjects,
      Collection<MemoryState> states,
      String afterId,
      int limit) {
    List<String> named = subjects.stream().filter(java.util.Objects::nonNull).toList();
    boolean none = subjects.contains(null);
    String subjectCondition = named.isEmpty()
        ? "subject IS NULL"
        : none ? "(subject IN (<subjects>) OR subject IS NULL)" : "subject IN (<subjects>)";
    return db.read(h -> {
      var query = h.createQuery("SELECT * FROM memories WHERE org_id = :org AND " + subjectCondition
              + " AND state IN (<states>) AND id > :after ORDER BY id LIMIT :limit")
          .bind("org", orgId)
          .bindList("states", states.stream().map(MemoryState::id).toList())
          .bind("after", afterId == null ? "" : afterId)
          .bind("limit", limit);
      if (!named.isEmpty()) {
        query.bindList("subjects", named);
      }
      return query.map(MEMORY).list();
    });
  }

  /** What distributions need of one memory, without its text or vector. */
  public record Vitals(MemoryState state, double confidence, Instant createdAt, UseHistory uses) {}

  /** Streams the vitals of the organization's memories in one state (every state when null). */
  public void forEachVitals(String orgId, MemoryState state, Consumer<Vitals> consumer) {
    db.read(h -> {
      h.createQuery(
              "SELECT state, confidence, created_at, recent_uses, older_use_count, older_use_weight,"
                  + " first_use_at FROM memories WHERE org_id = :org AND (:state IS NULL OR state = :state)")
          .bind("org", orgId)
          .bind("state", state == null ? null : state.id())
          .setFetchSize(1_000)
          .map((rs, ctx) -> new Vitals(
              MemoryState.fromId(rs.getString("state")).orElseThrow(),
              rs.getDouble("confidence"),
              Rows.instant(rs, "created_at"),
              MemoryStore.useHistory(rs)))
          .forEach(consumer);
      return null;
    });
  }

  /** How many of the organization's memories are in each state. */
  public Map<MemoryState, Long> countByState(String orgId) {
    return db.read(h -> {
      Map<MemoryState, Long> counts = new java.util.EnumMap<>(MemoryState.class);
      for (MemoryState state : MemoryState.values()) {
        counts.put(state, 0L);
      }
      h.createQuery("SELECT state, COUNT(*) AS n FROM memories WHERE org_id = :org GROUP BY state")
          .bind("org", orgId)
          .map((rs, ctx) ->
              Map.entry(MemoryState.fromId(rs.getString("state")).orElseThrow(), rs.getLong("n")))
          .forEach(e -> counts.put(e.getKey(), e.getValue()));
      return counts;
    });
  }
}
