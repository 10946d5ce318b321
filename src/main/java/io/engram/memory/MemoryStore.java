package io.engram.memory;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.Update;

/**
 * SQL for memories and what hangs off each: its transitions and uses, and the organization's write
 * mode. The change log, events and idempotency keys have stores of their own ({@link MemoryStores}). Methods taking a {@link Handle} run inside the caller's
 * transaction, so a memory and its history are always written together.
 */
public final class MemoryStore {

  static final RowMapper<MemoryRecord> MEMORY = (rs, ctx) -> new MemoryRecord(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("agent"),
      rs.getString("end_user_id"),
      rs.getString("session_id"),
      rs.getString("text"),
      rs.getString("subject"),
      MemoryKind.fromId(rs.getString("memory_kind")).orElseThrow(),
      rs.getDouble("confidence"),
      rs.getString("metadata"),
      MemoryState.fromId(rs.getString("state")).orElseThrow(),
      new MemoryRecord.Origin(
          MemorySource.valueOf(rs.getString("source").toUpperCase(java.util.Locale.ROOT)),
          rs.getString("event_id"),
          rs.getString("idempotency_key"),
          new ChangeAuthor(
              rs.getString("credential_id"), rs.getString("user_id"), rs.getString("request_id"))),
      Rows.instant(rs, "occurred_at"),
      Rows.instant(rs, "created_at"),
      Rows.instant(rs, "updated_at"),
      useHistory(rs),
      useCounts(rs),
      Embedder.fromBytes(rs.getBytes("embedding")),
      new Validity(
          Rows.nullableInstant(rs, "valid_from"),
          Rows.nullableInstant(rs, "valid_until"),
          Rows.nullableInstant(rs, "expires_at"),
          rs.getString("supersedes")));

  /** The use columns of a memory's row: what activation reads. */
  static UseHistory useHistory(ResultSet rs) throws SQLException {
    return new UseHistory(
        UseHistory.parseRecent(rs.getString("recent_uses")),
        rs.getLong("older_use_count"),
        rs.getDouble("older_use_weight"),
        Rows.instant(rs, "first_use_at"));
  }

  private static MemoryRecord.UseCounts useCounts(ResultSet rs) throws SQLException {
    return new MemoryRecord.UseCounts(
        rs.getLong("reinforcement_count"), rs.getLong("retrieval_count"));
  }

  /** Where another node may write uses (a shared database), how long a kept row is trusted. */
  private static final long SHARED_ROW_NANOS = 1_000_000_000L;

  private final Database db;
  private final RowCache cache;

  public MemoryStore(Database db) {
    this.db = db;
    this.cache = new RowCache(
        RowCache.capacityFor(Runtime.getRuntime().maxMemory()),
        db.kind() == Database.Kind.SQLITE ? Long.MAX_VALUE : SHARED_ROW_NANOS,
        System::nanoTime);
  }

  public Database database() {
    return db;
  }

  // ---- memories

  public void insert(Handle h, MemoryRecord m) {
    Update insert = h.createUpdate("""
            INSERT INTO memories (id, org_id, agent, end_user_id, session_id, text, subject, memory_kind, confidence, state, source,
                                  event_id, metadata, credential_id, user_id, request_id, idempotency_key,
                                  occurred_at, created_at, updated_at, recent_uses, older_use_count,
                                  older_use_weight, first_use_at, last_used_at, reinforcement_count,
                                  retrieval_count, embedding, text_digest,
                                  valid_from, valid_until, expires_at, supersedes)
            VALUES (:id, :org, :agent, :endUser, :session, :text, :subject, :kind, :confidence, :state, :source, :event, :metadata,
                    :credential, :user, :request, :idempotencyKey, :occurredAt, :createdAt, :updatedAt,
                    :recentUses, :olderCount, :olderWeight, :firstUseAt, :lastUsedAt, :reinforcements,
                    :retrievals, :embedding, :digest, :validFrom, :validUntil, :expiresAt, :supersedes)""")
        .bind("id", m.id())
        .bind("org", m.orgId())
        .bind("agent", m.agent())
        .bind("endUser", m.endUser())
        .bind("session", m.session())
        .bind("text", m.text())
        .bind("subject", m.subject())
        .bind("kind", m.kind().id())
        .bind("confidence", m.confidence())
        .bind("state", m.state().id())
        .bind("source", m.origin().source().id())
        .bind("event", m.origin().eventId())
        .bind("metadata", m.metadataJson())
        .bind("credential", m.origin().author().credentialId())
        .bind("user", m.origin().author().userId())
        .bind("request", m.origin().author().requestId())
        .bind("idempotencyKey", m.origin().idempotencyKey())
        .bind("occurredAt", m.occurredAt().toEpochMilli())
        .bind("createdAt", m.createdAt().toEpochMilli())
        .bind("updatedAt", m.updatedAt().toEpochMilli())
        .bind("embedding", Embedder.toBytes(m.embedding()))
        .bind("digest", MemoryDigest.of(m.text()))
        .bind("validFrom", millis(m.validity().validFrom()))
        .bind("validUntil", millis(m.validity().validUntil()))
        .bind("expiresAt", millis(m.validity().expiresAt()))
        .bind("supersedes", m.validity().supersedes());
    bindUses(insert, m.uses(), m.counts()).execute();
  }

  private static Long millis(Instant at) {
    return at == null ? null : at.toEpochMilli();
  }

  /** Closes a memory's validity at {@code until} (a newer memory replaced it), in the caller's transaction. */
  public void closeValidity(Handle h, String id, Instant until, Instant at) {
    forgetOnCommit(h, List.of(id));
    h.createUpdate("UPDATE memories SET valid_until = :until, updated_at = :at WHERE id = :id")
        .bind("until", until.toEpochMilli())
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute();
  }

  /** Opens a memory's validity again (an undone supersession), in the caller's transaction. */
  public void reopenValidity(Handle h, String id, Instant at) {
    forgetOnCommit(h, List.of(id));
    h.createUpdate("UPDATE memories SET valid_until = NULL, updated_at = :at WHERE id = :id")
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute();
  }

  /**
   * Records which memory {@code id} replaced and from when it holds ({@code null}s: none, open),
   * in the caller's transaction.
   */
  public void setReplacement(Handle h, String id, String replaced, Instant validFrom) {
    forgetOnCommit(h, List.of(id));
    h.createUpdate("UPDATE memories SET supersedes = :replaced, valid_from = :from WHERE id = :id")
        .bind("replaced", replaced)
        .bind("from", millis(validFrom))
        .bind("id", id)
        .execute();
  }

  /** Memories that expired by {@code now} and are not tombstoned yet, oldest expiry first. */
  public List<Map<String, Object>> expired(Instant now, int limit) {
    return db.read(h -> h.createQuery(
            "SELECT id, org_id, expires_at FROM memories"
                + " WHERE expires_at <= :now AND state <> 'tombstoned' ORDER BY expires_at LIMIT :limit")
        .bind("now", now.toEpochMilli())
        .bind("limit", limit)
        .mapToMap()
        .list());
  }

  public Optional<MemoryRecord> find(String orgId, String id) {
    return db.read(h -> find(h, orgId, id, false));
  }

  /** Reads a memory inside a write transaction; on PostgreSQL the row stays locked until commit. */
  public Optional<MemoryRecord> findForUpdate(Handle h, String orgId, String id) {
    return find(h, orgId, id, db.kind() == Database.Kind.POSTGRESQL);
  }

  private static Optional<MemoryRecord> find(Handle h, String orgId, String id, boolean lock) {
    return h.createQuery(
            "SELECT * FROM memories WHERE org_id = :org AND id = :id" + (lock ? " FOR UPDATE" : ""))
        .bind("org", orgId)
        .bind("id", id)
        .map(MEMORY)
        .findOne();
  }

  /** The memories among {@code ids}, by id; ids of other organizations are not returned. */
  public Map<String, MemoryRecord> findAll(String orgId, Collection<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    // By primary key only: with the organization in the WHERE clause too, SQLite's planner walks
    // the organization's index (all its memories) instead of looking up each id (18 ms at 100,000).
    Map<String, MemoryRecord> found = new LinkedHashMap<>(findByIds(ids));
    found.values().removeIf(m -> !m.orgId().equals(orgId));
    return found;
  }

  /**
   * The memories among {@code ids} as {@link #findAll} reads them, for retrieval's candidates:
   * those read recently come from the {@link RowCache}, the rest from the database (and are kept).
   */
  public Map<String, MemoryRecord> findCandidates(String orgId, Collection<String> ids) {
    // In id order, as the database answers an IN list by primary key, so that ranking's ties fall
    // the same way whether a row was kept or read.
    Map<String, MemoryRecord> found = new TreeMap<>();
    List<String> missing = new ArrayList<>();
    for (String id : ids) {
      MemoryRecord kept = cache.get(id);
      if (kept == null) {
        missing.add(id);
      } else if (kept.orgId().equals(orgId)) {
        found.put(id, kept);
      }
    }
    if (!missing.isEmpty()) {
      long generation = cache.generation();
      Map<String, MemoryRecord> read = findAll(orgId, missing);
      cache.fill(generation, read.values());
      found.putAll(read);
    }
    return new LinkedHashMap<>(found);
  }

  /** Retrieval reads this memory's row again (a node that followed another's logged change). */
  public void forgetRow(String id) {
    cache.forget(List.of(id));
  }

  /** Once the caller's transaction commits, retrieval reads these memories' rows again. */
  private void forgetOnCommit(Handle h, Collection<String> ids) {
    h.afterCommit(() -> cache.forget(ids));
  }

  /**
   * The memories among {@code ids} whatever their organization, by id: for an index checking what
   * the change log names (which carries no organization).
   */
  public Map<String, MemoryRecord> findByIds(Collection<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    return db.read(h -> {
      Map<String, MemoryRecord> found = new LinkedHashMap<>();
      h.createQuery("SELECT * FROM memories WHERE id IN (<ids>)")
          .bindList("ids", List.copyOf(ids))
          .map(MEMORY)
          .forEach(m -> found.put(m.id(), m));
      return found;
    });
  }

  /** The memory by id alone, for the index (which has no organization to go by when it catches up). */
  public Optional<MemoryRecord> findById(String id) {
    return db.read(h -> h.createQuery("SELECT * FROM memories WHERE id = :id")
        .bind("id", id)
        .map(MEMORY)
        .findOne());
  }

  public void updateState(Handle h, String id, MemoryState to, Instant at) {
    forgetOnCommit(h, List.of(id));
    h.createUpdate("UPDATE memories SET state = :state, updated_at = :at WHERE id = :id")
        .bind("state", to.id())
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute();
  }

  /** Stores a memory's new use summary and counters (the caller read the row for update). */
  public void updateUses(Handle h, String id, UseHistory uses, MemoryRecord.UseCounts counts) {
    updateUses(h, Map.of(id, new Uses(uses, counts)));
  }

  /** What a memory's uses are: its history for activation and its counts (no text, no vector). */
  public record Uses(UseHistory history, MemoryRecord.UseCounts counts) {}

  /**
   * The uses of these memories, by id, in one read: {@code orgOf} gives each id the organization
   * it must belong to (another organization's id is left out). Locked for the transaction on
   * PostgreSQL in id order, so two nodes writing uses of the same memories wait for each other
   * instead of deadlocking.
   */
  public Map<String, Uses> usesForUpdate(Handle h, Map<String, String> orgOf) {
    Map<String, Uses> found = new LinkedHashMap<>();
    if (orgOf.isEmpty()) {
      return found;
    }
    boolean lock = db.kind() == Database.Kind.POSTGRESQL;
    h.createQuery("SELECT id, org_id, recent_uses, older_use_count, older_use_weight, first_use_at,"
            + " reinforcement_count, retrieval_count FROM memories WHERE id IN (<ids>) ORDER BY id"
            + (lock ? " FOR UPDATE" : ""))
        .bindList("ids", List.copyOf(orgOf.keySet()))
        .map((rs, ctx) -> rs.getString("org_id").equals(orgOf.get(rs.getString("id")))
            ? Map.entry(rs.getString("id"), new Uses(useHistory(rs), useCounts(rs)))
            : null)
        .forEach(row -> {
          if (row != null) {
            found.put(row.getKey(), row.getValue());
          }
        });
    return found;
  }

  /** Writes these memories' uses (history and counts), one batch of updates. */
  public void updateUses(Handle h, Map<String, Uses> uses) {
    forgetOnCommit(h, List.copyOf(uses.keySet()));
    writeUses(h, uses);
  }

  /**
   * Writes retrieval's and answers' uses, which the writer read with {@link #usesForUpdate}: once
   * committed, kept rows that still hold what was read take what was written (retrieval's rows
   * change with every batch of uses; forgetting them would empty the cache as fast as it fills).
   * The caller writes one batch at a time.
   */
  public void writeRecordedUses(Handle h, Map<String, Uses> read, Map<String, Uses> written) {
    h.afterCommit(() -> cache.usesWritten(read, written));
    writeUses(h, written);
  }

  private static void writeUses(Handle h, Map<String, Uses> uses) {
    PreparedBatch batch = h.prepareBatch("""
        UPDATE memories SET recent_uses = :recentUses, older_use_count = :olderCount,
               older_use_weight = :olderWeight, first_use_at = :firstUseAt,
               last_used_at = :lastUsedAt, reinforcement_count = :reinforcements,
               retrieval_count = :retrievals
        WHERE id = :id""");
    uses.forEach(
        (id, use) -> bindUses(batch.bind("id", id), use.history(), use.counts()).add());
    batch.execute();
  }

  /** Binds a memory's use columns (the named parameters the insert and the update share). */
  private static <T extends SqlStatement<T>> T bindUses(
      T statement, UseHistory uses, MemoryRecord.UseCounts counts) {
    return statement
        .bind("recentUses", uses.recentText())
        .bind("olderCount", uses.olderCount())
        .bind("olderWeight", uses.olderWeight())
        .bind("firstUseAt", uses.firstUseAt().toEpochMilli())
        .bind("lastUsedAt", uses.lastUsedAt().toEpochMilli())
        .bind("reinforcements", counts.reinforcements())
        .bind("retrievals", counts.retrievals());
  }

  /**
   * The oldest durable memory the boundary owns whose text is {@code digest}'s ({@link
   * MemoryDigest}), about the same subject (or one of the two has none), at {@code occurredAt} when
   * it is given; empty when there is none.
   */
  public Optional<String> durableTwin(
      Handle h, String orgId, AgentScope scope, String digest, String subject, Instant occurredAt) {
    var query = h.createQuery("SELECT id, subject FROM memories WHERE org_id = :org"
            + " AND text_digest = :digest AND state = 'durable' AND " + scope.sqlCondition()
            + (occurredAt == null ? "" : " AND occurred_at = :occurredAt")
            + " ORDER BY created_at, id")
        .bind("org", orgId)
        .bind("digest", digest)
        .bindMap(scope.sqlBindings());
    if (occurredAt != null) {
      query.bind("occurredAt", occurredAt.toEpochMilli());
    }
    return query
        .map((rs, ctx) ->
            MemoryDigest.sameSubject(subject, rs.getString("subject")) ? rs.getString("id") : null)
        .list()
        .stream()
        .filter(java.util.Objects::nonNull)
        .findFirst();
  }

  /**
   * Gives memories written before deduplication their digest, {@code limit} at a time; how many it
   * gave (0: none is left).
   */
  public int digestUndigested(int limit) {
    List<Map<String, Object>> rows = db.read(
        h -> h.createQuery("SELECT id, text FROM memories WHERE text_digest IS NULL LIMIT :limit")
            .bind("limit", limit)
            .mapToMap()
            .list());
    if (rows.isEmpty()) {
      return 0;
    }
    db.write(h -> {
      var batch = h.prepareBatch(
          "UPDATE memories SET text_digest = :digest WHERE id = :id AND text_digest IS NULL");
      for (Map<String, Object> row : rows) {
        batch
            .bind("digest", MemoryDigest.of((String) row.get("text")))
            .bind("id", row.get("id"))
            .add();
      }
      return batch.execute();
    });
    return rows.size();
  }

  /** True when the boundary already holds a candidate or durable memory with exactly this text. */
  public boolean knows(String orgId, AgentScope scope, String text) {
    return db.read(h -> h.createQuery(
            "SELECT 1 FROM memories WHERE org_id = :org AND state IN ('candidate', 'durable')"
                + " AND text = :text AND " + scope.sqlCondition() + " LIMIT 1")
        .bind("org", orgId)
        .bind("text", text)
        .bindMap(scope.sqlBindings())
        .mapTo(Integer.class)
        .findOne()
        .isPresent());
  }

  /** Replaces what a memory says (an edit), with its new embedding when its indexed text changed. */
  public void updateContent(Handle h, MemoryRecord m, Instant at) {
    forgetOnCommit(h, List.of(m.id()));
    h.createUpdate("""
            UPDATE memories SET text = :text, subject = :subject, memory_kind = :kind,
              confidence = :confidence, metadata = :metadata, embedding = :embedding,
              text_digest = :digest, updated_at = :at
            WHERE id = :id""")
        .bind("text", m.text())
        .bind("subject", m.subject())
        .bind("kind", m.kind().id())
        .bind("confidence", m.confidence())
        .bind("metadata", m.metadataJson())
        .bind("embedding", Embedder.toBytes(m.embedding()))
        .bind("digest", MemoryDigest.of(m.text()))
        .bind("at", at.toEpochMilli())
        .bind("id", m.id())
        .execute();
  }

  /**
   * What a list keeps: states, and optionally a kind, a subject, when it occurred [from, until),
   * the session it came from and conditions on its metadata (which the caller applies: here only
   * rows without metadata are left out when there are any).
   */
  public record Filter(
      Collection<MemoryState> states,
      MemoryKind kind,
      String subject,
      Instant occurredFrom,
      Instant occurredUntil,
      String session,
      MetadataFilters metadata) {
    public Filter(Collection<MemoryState> states, MemoryKind kind, String subject) {
      this(states, kind, subject, null, null, null, MetadataFilters.NONE);
    }
  }

  /** A page of the boundary's memories, newest first, filtered. */
  public List<MemoryRecord> list(
      String orgId, AgentScope scope, Filter filter, String beforeId, int limit) {
    return page(
        orgId,
        scope.sqlCondition(),
        scope.sqlBindings(),
        filter,
        "id < :cursor",
        beforeId == null ? "~" : beforeId,
        "id DESC",
        limit);
  }

  /**
   * A page of the memories at and beneath a boundary, oldest id first after {@code afterId}: its
   * agent's (every agent's at the organization level) and its end user's (every user's when it
   * names none), filtered, embeddings included: what an export streams.
   */
  public List<MemoryRecord> exportPage(
      String orgId, AgentScope scope, Filter filter, String afterId, int limit) {
    return exportPage(orgId, scope, filter, afterId, limit, "");
  }

  private List<MemoryRecord> exportPage(
      String orgId, AgentScope scope, Filter filter, String afterId, int limit, String more) {
    String beneath = (scope.agent() == null ? "1 = 1" : "agent = :scopeAgent")
        + (scope.user() == null ? "" : " AND end_user_id = :scopeUser")
        + more;
    return page(
        orgId,
        beneath,
        scope.sqlBindings(),
        filter,
        "id > :cursor",
        afterId == null ? "" : afterId,
        "id",
        limit);
  }

  private List<MemoryRecord> page(
      String orgId,
      String scopeSql,
      Map<String, Object> scopeBindings,
      Filter filter,
      String cursorSql,
      String cursor,
      String order,
      int limit) {
    String sql = "SELECT * FROM memories WHERE org_id = :org AND " + cursorSql
        + " AND state IN (<states>) AND " + scopeSql
        + (filter.kind() == null ? "" : " AND memory_kind = :kind")
        + (filter.subject() == null ? "" : " AND subject = :subject")
        + (filter.occurredFrom() == null ? "" : " AND occurred_at >= :from")
        + (filter.occurredUntil() == null ? "" : " AND occurred_at < :until")
        + (filter.session() == null ? "" : " AND session_id = :session")
        + (filter.metadata().isEmpty() ? "" : " AND metadata IS NOT NULL")
        + " ORDER BY " + order + " LIMIT :limit";
    return db.read(h -> {
      var query = h.createQuery(sql)
          .bind("org", orgId)
          .bind("cursor", cursor)
          .bindList("states", filter.states().stream().map(MemoryState::id).toList())
          .bind("limit", limit)
          .bindMap(scopeBindings);
      if (filter.kind() != null) {
        query.bind("kind", filter.kind().id());
      }
      if (filter.subject() != null) {
        query.bind("subject", filter.subject());
      }
      if (filter.occurredFrom() != null) {
        query.bind("from", filter.occurredFrom().toEpochMilli());
      }
      if (filter.occurredUntil() != null) {
        query.bind("until", filter.occurredUntil().toEpochMilli());
      }
      if (filter.session() != null) {
        query.bind("session", filter.session());
      }
      return query.map(MEMORY).list();
    });
  }

  /** The boundary's candidates awaiting review, oldest first. */
  public List<MemoryRecord> candidates(String orgId, AgentScope scope, String afterId, int limit) {
    return db.read(
        h -> h.createQuery("SELECT * FROM memories WHERE org_id = :org AND state = 'candidate'"
                + " AND id > :after AND " + scope.sqlCondition()
                + " ORDER BY id LIMIT :limit")
            .bind("org", orgId)
            .bind("after", afterId == null ? "" : afterId)
            .bind("limit", limit)
            .bindMap(scope.sqlBindings())
            .map(MEMORY)
            .list());
  }

  /**
   * A page of the memories at and beneath a boundary that still hold content, in any state,
   * oldest id first: what an erasure takes, a page at a time.
   */
  public List<MemoryRecord> erasablePage(
      String orgId, AgentScope scope, Filter filter, String afterId, int limit) {
    return exportPage(orgId, scope, filter, afterId, limit, " AND text <> '" + ERASED_TEXT + "'");
  }

  /** What an erased memory's text is: nothing (an encode's text is never empty). */
  public static final String ERASED_TEXT = "";

  /**
   * Removes what the memories say, in the caller's transaction: text, subject, metadata, embedding
   * and digest, and the reasons of their transitions (an edit's keeps what it said before); the
   * row stays, tombstoned, for audit. Replays of their encodes (which hold the text) are dropped.
   * How many transitions lost a reason.
   */
  public int erase(Handle h, Collection<String> ids, Instant at) {
    if (ids.isEmpty()) {
      return 0;
    }
    forgetOnCommit(h, ids);
    List<String> list = List.copyOf(ids);
    h.createUpdate("UPDATE memories SET text = :erased, subject = NULL, metadata = NULL,"
            + " embedding = :nothing, text_digest = NULL, state = 'tombstoned', updated_at = :at"
            + " WHERE id IN (<ids>)")
        .bind("erased", ERASED_TEXT)
        .bind("nothing", new byte[0])
        .bind("at", at.toEpochMilli())
        .bindList("ids", list)
        .execute();
    h.createUpdate("DELETE FROM memory_idempotency WHERE memory_id IN (<ids>)")
        .bindList("ids", list)
        .execute();
    return h.createUpdate("UPDATE memory_transitions SET reason = NULL"
            + " WHERE memory_id IN (<ids>) AND reason IS NOT NULL")
        .bindList("ids", list)
        .execute();
  }

  /**
   * What an erasure removed that is there again, by table, each with the erased memories it
   * belongs to: a transition with a reason other than the erasure's own ({@code keptReason}), a
   * business event that staged one of them with its text, a replay of an encode that holds it.
   * Empty lists when nothing is.
   */
  public Map<String, List<String>> leftBehind(
      String orgId, Collection<String> ids, String keptReason) {
    Map<String, List<String>> left = new java.util.LinkedHashMap<>();
    if (ids.isEmpty()) {
      return left;
    }
    List<String> list = List.copyOf(ids);
    return db.read(h -> {
      left.put(
          "memory_transitions",
          h.createQuery("SELECT DISTINCT memory_id FROM memory_transitions WHERE memory_id IN"
                  + " (<ids>) AND reason IS NOT NULL AND reason <> :kept ORDER BY memory_id")
              .bindList("ids", list)
              .bind("kept", keptReason)
              .mapTo(String.class)
              .list());
      left.put(
          "business_events",
          h.createQuery("SELECT DISTINCT m.id FROM memories m JOIN business_events e"
                  + " ON e.id = m.event_id AND e.org_id = m.org_id WHERE m.org_id = :org"
                  + " AND m.id IN (<ids>) AND e.text <> '' ORDER BY m.id")
              .bind("org", orgId)
              .bindList("ids", list)
              .mapTo(String.class)
              .list());
      left.put(
          "memory_idempotency",
          h.createQuery("SELECT DISTINCT memory_id FROM memory_idempotency WHERE memory_id IN"
                  + " (<ids>) ORDER BY memory_id")
              .bindList("ids", list)
              .mapTo(String.class)
              .list());
      return left;
    });
  }

  /** The organization of each of {@code ids} that names a memory, by id (in any organization). */
  public Map<String, String> organizationsOf(Handle h, Collection<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    Map<String, String> owners = new java.util.HashMap<>();
    h.createQuery("SELECT id, org_id FROM memories WHERE id IN (<ids>)")
        .bindList("ids", List.copyOf(ids))
        .map((rs, ctx) -> Map.entry(rs.getString("id"), rs.getString("org_id")))
        .forEach(row -> owners.put(row.getKey(), row.getValue()));
    return owners;
  }

  /** Every retrievable memory, in id order, for rebuilding the index. */
  public void forEachRetrievable(Consumer<MemoryRecord> consumer) {
    db.read(h -> {
      h.createQuery("SELECT * FROM memories WHERE state = 'durable' ORDER BY id")
          .setFetchSize(500)
          .map(MEMORY)
          .forEach(consumer);
      return null;
    });
  }

  public void updateConfidence(Handle h, String id, double confidence, Instant at) {
    forgetOnCommit(h, List.of(id));
    h.createUpdate("UPDATE memories SET confidence = :confidence, updated_at = :at WHERE id = :id")
        .bind("confidence", confidence)
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute();
  }
}
