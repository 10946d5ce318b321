package io.engram.reflection;

import io.engram.platform.WireNames;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * SQL for reflection: settings, runs (the audits), the events of each run, open flags and the
 * per-organization lease. Methods taking a {@link Handle} run inside the caller's transaction.
 */
final class ReflectionStore {

  private static final RowMapper<ReflectionRun> RUN = (rs, ctx) -> new ReflectionRun(
      rs.getString("id"),
      rs.getString("org_id"),
      WireNames.parse(ReflectionRun.Trigger.class, rs.getString("trigger")).orElseThrow(),
      rs.getString("credential_id"),
      rs.getString("user_id"),
      rs.getString("request_id"),
      rs.getInt("dry_run") == 1,
      WireNames.parse(ReflectionRun.Status.class, rs.getString("status")).orElseThrow(),
      rs.getString("settings"),
      rs.getString("node"),
      Rows.instant(rs, "started_at"),
      Rows.nullableInstant(rs, "finished_at"),
      rs.getLong("examined"),
      rs.getString("counts"),
      rs.getString("error"),
      Rows.nullableInstant(rs, "undone_at"),
      rs.getString("undone_by"));

  private static final RowMapper<ReflectionEvent> EVENT = (rs, ctx) -> new ReflectionEvent(
      rs.getLong("seq"),
      rs.getString("id"),
      rs.getString("run_id"),
      rs.getString("org_id"),
      ChangeKind.fromId(rs.getString("change")).orElseThrow(),
      rs.getString("memory_id"),
      rs.getString("related_memory_id"),
      WireNames.parse(ReflectionEvent.Outcome.class, rs.getString("outcome")).orElseThrow(),
      rs.getString("reason"),
      rs.getString("before"),
      rs.getString("after"),
      Rows.instant(rs, "at"),
      Rows.nullableInstant(rs, "undone_at"),
      rs.getString("undone_by"));

  /** An organization whose schedule may be due: its stored settings (null: defaults) and last real run. */
  record ScheduleState(String orgId, String settingsJson, Instant lastRunAt) {}

  /** Filters of the events route; nulls match everything. */
  record EventFilter(
      String runId,
      ReflectionProcess process,
      ChangeKind change,
      String memoryId,
      Instant since,
      Instant until) {}

  private final Database db;

  /** What an erased memory's changes say instead of their reasons. */
  static final String ERASED_REASON = "(erased)";

  /** Removes the reasons of the organization's changes to {@code memoryIds}; how many changes. */
  long forget(String orgId, java.util.Set<String> memoryIds) {
    List<String> ids = List.copyOf(memoryIds);
    long count = 0;
    for (int from = 0; from < ids.size(); from += 500) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + 500));
      count += db.write(h -> h.createUpdate("UPDATE reflection_events SET reason = :erased"
              + " WHERE org_id = :org AND reason <> :erased"
              + " AND (memory_id IN (<ids>) OR related_memory_id IN (<ids>))")
          .bind("erased", ERASED_REASON)
          .bind("org", orgId)
          .bindList("ids", chunk)
          .execute());
    }
    return count;
  }

  ReflectionStore(Database db) {
    this.db = db;
  }

  Database database() {
    return db;
  }

  // ---- settings

  Optional<String> settings(String orgId) {
    return db.read(
        h -> h.createQuery("SELECT settings FROM reflection_settings WHERE org_id = :org")
            .bind("org", orgId)
            .mapTo(String.class)
            .findOne());
  }

  void saveSettings(String orgId, String json, String updatedBy, Instant at) {
    db.write(h -> h.createUpdate("""
            INSERT INTO reflection_settings (org_id, settings, updated_at, updated_by) VALUES (:org, :json, :at, :by)
            ON CONFLICT (org_id) DO UPDATE SET settings = :json, updated_at = :at, updated_by = :by""")
        .bind("org", orgId)
        .bind("json", json)
        .bind("at", at.toEpochMilli())
        .bind("by", updatedBy)
        .execute());
  }

  /** Every organization that has memories, with what its schedule depends on. */
  List<ScheduleState> scheduleStates() {
    return db.read(h -> h.createQuery("""
            SELECT o.id, s.settings,
                   (SELECT MAX(r.started_at) FROM reflection_runs r WHERE r.org_id = o.id AND r.dry_run = 0) AS last_run
            FROM organizations o LEFT JOIN reflection_settings s ON s.org_id = o.id
            WHERE EXISTS (SELECT 1 FROM memories m WHERE m.org_id = o.id)""")
        .map((rs, ctx) -> new ScheduleState(
            rs.getString("id"), rs.getString("settings"), Rows.nullableInstant(rs, "last_run")))
        .list());
  }

  Optional<Instant> lastRunStart(Handle h, String orgId) {
    return h.createQuery(
            "SELECT MAX(started_at) FROM reflection_runs WHERE org_id = :org AND dry_run = 0")
        .bind("org", orgId)
        .mapTo(Long.class)
        .findOne()
        .map(Instant::ofEpochMilli);
  }

  // ---- lease

  /**
   * Takes the organization's lease for a run unless another holder's lease is still valid. On
   * PostgreSQL a racing insert waits for the other transaction and then sees its row.
   */
  boolean acquireLease(
      Handle h, String orgId, String runId, String holder, Instant now, Instant expiresAt) {
    return h.createUpdate("""
            INSERT INTO reflection_leases (org_id, run_id, holder, expires_at) VALUES (:org, :run, :holder, :expires)
            ON CONFLICT (org_id) DO UPDATE SET run_id = excluded.run_id, holder = excluded.holder,
                                               expires_at = excluded.expires_at
            WHERE reflection_leases.expires_at <= :now""")
            .bind("org", orgId)
            .bind("run", runId)
            .bind("holder", holder)
            .bind("expires", expiresAt.toEpochMilli())
            .bind("now", now.toEpochMilli())
            .execute()
        == 1;
  }

  /** Extends the lease if this run still holds it; false when it was lost (it expired and another took it). */
  boolean renewLease(String orgId, String runId, Instant expiresAt) {
    return db.write(h -> h.createUpdate("UPDATE reflection_leases SET expires_at = :expires"
                + " WHERE org_id = :org AND run_id = :run")
            .bind("expires", expiresAt.toEpochMilli())
            .bind("org", orgId)
            .bind("run", runId)
            .execute()
        == 1);
  }

  void releaseLease(String orgId, String runId) {
    db.write(
        h -> h.createUpdate("DELETE FROM reflection_leases WHERE org_id = :org AND run_id = :run")
            .bind("org", orgId)
            .bind("run", runId)
            .execute());
  }

  Optional<String> leaseHolderRun(String orgId, Instant now) {
    return db.read(h -> h.createQuery(
            "SELECT run_id FROM reflection_leases WHERE org_id = :org AND expires_at > :now")
        .bind("org", orgId)
        .bind("now", now.toEpochMilli())
        .mapTo(String.class)
        .findOne());
  }

  // ---- runs

  void insertRun(Handle h, ReflectionRun run) {
    h.createUpdate("""
            INSERT INTO reflection_runs (id, org_id, trigger, credential_id, user_id, request_id, dry_run, status,
                                         settings, node, started_at, examined)
            VALUES (:id, :org, :trigger, :credential, :user, :request, :dryRun, :status, :settings, :node, :started, 0)""")
        .bind("id", run.id())
        .bind("org", run.orgId())
        .bind("trigger", run.trigger().id())
        .bind("credential", run.credentialId())
        .bind("user", run.userId())
        .bind("request", run.requestId())
        .bind("dryRun", run.dryRun() ? 1 : 0)
        .bind("status", run.status().id())
        .bind("settings", run.settingsJson())
        .bind("node", run.node())
        .bind("started", run.startedAt().toEpochMilli())
        .execute();
  }

  /** Runs of the organization still marked running whose lease is gone: their node stopped mid-run. */
  int abandonRuns(Handle h, String orgId, String exceptRunId, Instant now) {
    return h.createUpdate("""
            UPDATE reflection_runs SET status = 'failed', finished_at = :now,
                   error = 'the node running it stopped before it finished'
            WHERE org_id = :org AND status = 'running' AND id <> :run""")
        .bind("org", orgId)
        .bind("run", exceptRunId)
        .bind("now", now.toEpochMilli())
        .execute();
  }

  void finishRun(
      String runId,
      ReflectionRun.Status status,
      Instant at,
      long examined,
      String countsJson,
      String error) {
    db.write(h -> h.createUpdate("""
            UPDATE reflection_runs SET status = :status, finished_at = :at, examined = :examined, counts = :counts,
                   error = :error
            WHERE id = :id""")
        .bind("status", status.id())
        .bind("at", at.toEpochMilli())
        .bind("examined", examined)
        .bind("counts", countsJson)
        .bind("error", error)
        .bind("id", runId)
        .execute());
  }

  void markRunUndone(String runId, Instant at, String by) {
    db.write(h -> h.createUpdate(
            "UPDATE reflection_runs SET undone_at = :at, undone_by = :by WHERE id = :id")
        .bind("at", at.toEpochMilli())
        .bind("by", by)
        .bind("id", runId)
        .execute());
  }

  Optional<ReflectionRun> run(String orgId, String runId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM reflection_runs WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", runId)
            .map(RUN)
            .findOne());
  }

  /** Runs newest first, started in [since, until), before the cursor run id. */
  List<ReflectionRun> runs(String orgId, Instant since, Instant until, String beforeId, int limit) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM reflection_runs WHERE org_id = :org AND started_at >= :since AND started_at < :until
              AND id < :before ORDER BY id DESC LIMIT :limit""")
        .bind("org", orgId)
        .bind("since", since.toEpochMilli())
        .bind("until", until.toEpochMilli())
        .bind("before", beforeId == null ? "~" : beforeId)
        .bind("limit", limit)
        .map(RUN)
        .list());
  }

  // ---- events

  void insertEvent(Handle h, ReflectionEvent e) {
    h.createUpdate("""
            INSERT INTO reflection_events (id, run_id, org_id, process, change, memory_id, related_memory_id, outcome,
                                           reason, before, after, at)
            VALUES (:id, :run, :org, :process, :change, :memory, :related, :outcome, :reason, :before, :after, :at)""")
        .bind("id", e.id())
        .bind("run", e.runId())
        .bind("org", e.orgId())
        .bind("process", e.change().process().id())
        .bind("change", e.change().id())
        .bind("memory", e.memoryId())
        .bind("related", e.relatedMemoryId())
        .bind("outcome", e.outcome().id())
        .bind("reason", e.reason())
        .bind("before", e.beforeJson())
        .bind("after", e.afterJson())
        .bind("at", e.at().toEpochMilli())
        .execute();
  }

  Optional<ReflectionEvent> event(String orgId, String eventId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM reflection_events WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", eventId)
            .map(EVENT)
            .findOne());
  }

  /** Events oldest first after the cursor position, filtered. */
  List<ReflectionEvent> events(String orgId, EventFilter filter, long afterSeq, int limit) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM reflection_events WHERE org_id = :org AND seq > :after
              AND (:run IS NULL OR run_id = :run) AND (:process IS NULL OR process = :process)
              AND (:change IS NULL OR change = :change)
              AND (:memory IS NULL OR memory_id = :memory OR related_memory_id = :memory)
              AND at >= :since AND at < :until
            ORDER BY seq LIMIT :limit""")
        .bind("org", orgId)
        .bind("after", afterSeq)
        .bind("run", filter.runId())
        .bind("process", filter.process() == null ? null : filter.process().id())
        .bind("change", filter.change() == null ? null : filter.change().id())
        .bind("memory", filter.memoryId())
        .bind("since", filter.since() == null ? Long.MIN_VALUE : filter.since().toEpochMilli())
        .bind("until", filter.until() == null ? Long.MAX_VALUE : filter.until().toEpochMilli())
        .bind("limit", limit)
        .map(EVENT)
        .list());
  }

  /** Every event about a memory (as the changed memory or the related one), oldest first. */
  List<ReflectionEvent> eventsAbout(String orgId, String memoryId) {
    return events(orgId, new EventFilter(null, null, null, memoryId, null, null), 0, 1_000);
  }

  /** A run's applied events not yet undone, newest first (the order to undo them in). */
  List<ReflectionEvent> undoableEvents(String runId) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM reflection_events WHERE run_id = :run AND outcome = 'applied' AND undone_at IS NULL
            ORDER BY seq DESC""").bind("run", runId).map(EVENT).list());
  }

  void markEventUndone(Handle h, String eventId, Instant at, String by) {
    h.createUpdate("UPDATE reflection_events SET undone_at = :at, undone_by = :by WHERE id = :id")
        .bind("at", at.toEpochMilli())
        .bind("by", by)
        .bind("id", eventId)
        .execute();
  }

  // ---- flags

  /** The open flags of one kind in the organization: memory id to the related memory ids ("" for none). */
  Map<String, List<String>> openFlags(String orgId, String kind) {
    return db.read(h -> {
      Map<String, List<String>> flags = new HashMap<>();
      h.createQuery(
              "SELECT memory_id, related_memory_id FROM reflection_flags WHERE org_id = :org AND kind = :kind")
          .bind("org", orgId)
          .bind("kind", kind)
          .map((rs, ctx) -> Map.entry(rs.getString("memory_id"), rs.getString("related_memory_id")))
          .forEach(e -> flags
              .computeIfAbsent(e.getKey(), k -> new java.util.ArrayList<>())
              .add(e.getValue()));
      return flags;
    });
  }

  boolean raiseFlag(
      Handle h,
      String orgId,
      String memoryId,
      String kind,
      String related,
      String eventId,
      Instant at) {
    return h.createUpdate("""
            INSERT INTO reflection_flags (memory_id, kind, related_memory_id, org_id, event_id, raised_at)
            VALUES (:memory, :kind, :related, :org, :event, :at) ON CONFLICT DO NOTHING""")
            .bind("memory", memoryId)
            .bind("kind", kind)
            .bind("related", related == null ? "" : related)
            .bind("org", orgId)
            .bind("event", eventId)
            .bind("at", at.toEpochMilli())
            .execute()
        == 1;
  }

  boolean clearFlag(Handle h, String memoryId, String kind, String related) {
    return h.createUpdate("DELETE FROM reflection_flags WHERE memory_id = :memory AND kind = :kind"
                + " AND related_memory_id = :related")
            .bind("memory", memoryId)
            .bind("kind", kind)
            .bind("related", related == null ? "" : related)
            .execute()
        == 1;
  }

  /** Open flags on one memory, for provenance. */
  List<Map<String, Object>> flagsOn(String memoryId) {
    return db.read(h -> h.createQuery(
            "SELECT kind, related_memory_id, event_id, raised_at FROM reflection_flags"
                + " WHERE memory_id = :memory ORDER BY raised_at")
        .bind("memory", memoryId)
        .map((rs, ctx) -> {
          Map<String, Object> flag = new LinkedHashMap<>();
          flag.put("kind", rs.getString("kind"));
          String related = rs.getString("related_memory_id");
          flag.put("relatedMemoryId", related.isEmpty() ? null : related);
          flag.put("eventId", rs.getString("event_id"));
          flag.put("raisedAt", Rows.instant(rs, "raised_at").toString());
          return flag;
        })
        .list());
  }

  // ---- report figures

  /** Runs that started in [since, until): how many, how they ended, how long they took. */
  record RunCounts(
      long total,
      long completed,
      long failed,
      long running,
      long dryRuns,
      long scheduled,
      long manual,
      long examined,
      long completedMillis,
      Long longest) {}

  /** Events of one change kind and outcome in a span (and, per bucket, which bucket). */
  record ChangeCount(int bucket, String change, String outcome, long count, long undone) {}

  /** Open flags by kind. */
  Map<String, Long> openFlags(String orgId) {
    Map<String, Long> flags = new LinkedHashMap<>();
    db.read(h -> h.createQuery(
                "SELECT kind, COUNT(*) AS n FROM reflection_flags WHERE org_id = :org GROUP BY kind")
            .bind("org", orgId)
            .map((rs, ctx) -> Map.entry(rs.getString("kind"), rs.getLong("n")))
            .list())
        .forEach(e -> flags.put(e.getKey(), e.getValue()));
    return flags;
  }

  RunCounts runCounts(String orgId, Instant since, Instant until) {
    return db.read(h -> h.createQuery("""
            SELECT COUNT(*) AS total,
                   COALESCE(SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END), 0) AS completed,
                   COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) AS failed,
                   COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0) AS running,
                   COALESCE(SUM(dry_run), 0) AS dry_runs,
                   COALESCE(SUM(CASE WHEN trigger = 'schedule' THEN 1 ELSE 0 END), 0) AS scheduled,
                   COALESCE(SUM(CASE WHEN trigger = 'manual' THEN 1 ELSE 0 END), 0) AS manual,
                   COALESCE(SUM(examined), 0) AS examined,
                   COALESCE(SUM(CASE WHEN status = 'completed' THEN finished_at - started_at END), 0) AS completed_millis,
                   MAX(finished_at - started_at) AS longest
            FROM reflection_runs WHERE org_id = :org AND started_at >= :since AND started_at < :until""")
        .bind("org", orgId)
        .bind("since", since.toEpochMilli())
        .bind("until", until.toEpochMilli())
        .map((rs, ctx) -> new RunCounts(
            rs.getLong("total"),
            rs.getLong("completed"),
            rs.getLong("failed"),
            rs.getLong("running"),
            rs.getLong("dry_runs"),
            rs.getLong("scheduled"),
            rs.getLong("manual"),
            rs.getLong("examined"),
            rs.getLong("completed_millis"),
            Rows.nullableLong(rs, "longest")))
        .one());
  }

  /** Events in [since, until) by change kind and outcome; {@code bucket} is 0. */
  List<ChangeCount> changeCounts(String orgId, Instant since, Instant until) {
    return db.read(h -> h.createQuery("""
            SELECT change, outcome, COUNT(*) AS n, SUM(CASE WHEN undone_at IS NULL THEN 0 ELSE 1 END) AS undone
            FROM reflection_events WHERE org_id = :org AND at >= :since AND at < :until
            GROUP BY change, outcome ORDER BY change""")
        .bind("org", orgId)
        .bind("since", since.toEpochMilli())
        .bind("until", until.toEpochMilli())
        .map((rs, ctx) -> new ChangeCount(
            0,
            rs.getString("change"),
            rs.getString("outcome"),
            rs.getLong("n"),
            rs.getLong("undone")))
        .list());
  }

  /** Runs started per bucket of {@code width} from {@code since}, by bucket index. */
  Map<Integer, Long> runsPerBucket(String orgId, Instant since, Instant until, long width) {
    Map<Integer, Long> runs = new HashMap<>();
    db.read(h -> h.createQuery(
                "SELECT (started_at - :since) / :width AS b, COUNT(*) AS n FROM reflection_runs"
                    + " WHERE org_id = :org AND started_at >= :since AND started_at < :until GROUP BY (started_at - :since) / :width")
            .bind("org", orgId)
            .bind("since", since.toEpochMilli())
            .bind("until", until.toEpochMilli())
            .bind("width", width)
            .map((rs, ctx) -> Map.entry(rs.getInt("b"), rs.getLong("n")))
            .list())
        .forEach(e -> runs.put(e.getKey(), e.getValue()));
    return runs;
  }

  /** Events per bucket of {@code width} from {@code since}, by change kind and outcome. */
  List<ChangeCount> changesPerBucket(String orgId, Instant since, Instant until, long width) {
    return db.read(h -> h.createQuery("""
            SELECT (at - :since) / :width AS b, change, outcome, COUNT(*) AS n,
                   SUM(CASE WHEN undone_at IS NULL THEN 0 ELSE 1 END) AS undone
            FROM reflection_events WHERE org_id = :org AND at >= :since AND at < :until
            GROUP BY (at - :since) / :width, change, outcome""")
        .bind("org", orgId)
        .bind("since", since.toEpochMilli())
        .bind("until", until.toEpochMilli())
        .bind("width", width)
        .map((rs, ctx) -> new ChangeCount(
            rs.getInt("b"),
            rs.getString("change"),
            rs.getString("outcome"),
            rs.getLong("n"),
            rs.getLong("undone")))
        .list());
  }
}
