package io.engram.instances.snapshots;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.instances.files.DurableFiles;
import io.engram.instances.files.FileStore;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoredFile;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.OrganizationData;
import io.engram.store.Rows;
import io.engram.store.SnapshotRows;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSetMetaData;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * Snapshots of instances, consistent while writes go on: in one database transaction (the
 * organization's storage writes wait on its lock for that long; PostgreSQL reads at repeatable
 * read) the instance's files are hard-linked into the snapshot (blobs are never changed in place,
 * so a link is the file as it was) and the organization's data it serves is written as JSON lines
 * (memories, events, assistants and their capability history, settings and variables, retention
 * policies, purchases, and the instance's variables and conversation history). A manifest lists
 * every part with its SHA-256; the snapshot is {@code complete} only once every part was read
 * back and matched it.
 */
public final class Snapshots {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Snapshots.class);
  public static final int DEFAULT_RETENTION_DAYS = 7;
  public static final int MAX_RETENTION_DAYS = 3650;

  private static final RowMapper<Snapshot> SNAPSHOT = (rs, ctx) -> new Snapshot(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("instance_id"),
      rs.getString("kind"),
      rs.getString("description"),
      rs.getString("status"),
      rs.getString("location"),
      Rows.instant(rs, "created_at"),
      Rows.nullableInstant(rs, "completed_at"),
      Rows.instant(rs, "expires_at"),
      Rows.nullableInt(rs, "files"),
      Rows.nullableLong(rs, "bytes"),
      rs.getString("manifest_sha256"),
      rs.getString("error"));

  private final Database db;
  private final FileStore files;
  private final Path root;
  private final Clock clock;
  /** The domains whose tables a snapshot keeps and a restore puts back, in that order. */
  private final List<OrganizationData> parts = new CopyOnWriteArrayList<>();

  public Snapshots(Database db, FileStore files, Path root, Clock clock) {
    this.db = db;
    this.files = files;
    this.root = root;
    this.clock = clock;
  }

  /**
   * Takes a snapshot of the instance into {@code destination} (this node's snapshot folder when
   * null): complete, or failed with the reason. Never throws for a destination that refuses: the
   * failed snapshot says why (automatic backups raise their alert from it).
   */
  public Snapshot take(
      Organization org,
      String instanceId,
      String kind,
      String description,
      int retentionDays,
      Path destination) {
    Instant now = clock.instant();
    String id = Ids.newId("snap", now.toEpochMilli());
    Path dir = (destination == null ? root : destination).resolve(id);
    db.write(h -> h.createUpdate("""
            INSERT INTO snapshots (id, org_id, instance_id, kind, description, status, location,
              created_at, expires_at)
            VALUES (:id, :org, :instance, :kind, :description, 'creating', :location, :now,
              :expires)""")
        .bind("id", id)
        .bind("org", org.id())
        .bind("instance", instanceId)
        .bind("kind", kind)
        .bind("description", description)
        .bind("location", dir.toString())
        .bind("now", now.toEpochMilli())
        .bind("expires", now.plus(Duration.ofDays(retentionDays)).toEpochMilli())
        .execute());
    try {
      ObjectNode manifest = capture(org, instanceId, dir);
      manifest.put("snapshot_id", id);
      manifest.put("kind", kind);
      manifest.put("created_at", now.getEpochSecond());
      byte[] written = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest);
      DurableFiles.writeSynced(dir.resolve("manifest.json"), written);
      DurableFiles.syncDirectory(dir);
      verify(dir);
      long bytes = 0;
      for (JsonNode file : manifest.get("files")) {
        bytes += file.get("size").asLong();
      }
      long total = bytes;
      db.write(h -> h.createUpdate("""
              UPDATE snapshots SET status = 'complete', completed_at = :at, files = :files,
                bytes = :bytes, manifest_sha256 = :sha WHERE id = :id""")
          .bind("at", clock.millis())
          .bind("files", manifest.get("files").size())
          .bind("bytes", total)
          .bind("sha", DurableFiles.sha256(written))
          .bind("id", id)
          .execute());
    } catch (IOException | RuntimeException e) {
      fail(id, dir, e.getMessage() == null ? e.toString() : e.getMessage());
    }
    return get(instanceId, id);
  }

  /** The instance's files and the organization's rows, read in one transaction. */
  private ObjectNode capture(Organization org, String instanceId, Path dir) throws IOException {
    Files.createDirectories(dir.resolve("blobs"));
    Files.createDirectories(dir.resolve("tables"));
    ObjectNode manifest = Json.MAPPER.createObjectNode();
    manifest.put("organization_id", org.id());
    manifest.put("instance_id", instanceId);
    ArrayNode fileList = manifest.putArray("files");
    ArrayNode tables = manifest.putArray("tables");
    db.write(h -> {
      if (db.kind() == Database.Kind.POSTGRESQL) {
        h.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        h.createQuery("SELECT id FROM organizations WHERE id = :org FOR UPDATE")
            .bind("org", org.id())
            .mapTo(String.class)
            .findOne();
      }
      for (StoredFile file : files.list(h, instanceId)) {
        Path link = dir.resolve("blobs").resolve(file.blob());
        DurableFiles.linkOrCopy(files.bytes(file), link);
        ObjectNode entry = fileList.addObject();
        entry.put("path", file.path());
        entry.put("blob", file.blob());
        entry.put("size", file.size());
        entry.put("sha256", file.sha256());
        entry.put("content_type", file.contentType());
      }
      for (Map.Entry<String, String> table : tables().entrySet()) {
        Path out = dir.resolve("tables").resolve(table.getKey() + ".jsonl");
        long rows = dump(h, table.getValue(), org.id(), instanceId, out);
        ObjectNode entry = tables.addObject();
        entry.put("name", table.getKey());
        entry.put("rows", rows);
        entry.put("sha256", DurableFiles.fileSha256(out));
      }
      return null;
    });
    return manifest;
  }

  private static long dump(Handle h, String sql, String orgId, String instanceId, Path out) {
    var query = h.createQuery(sql);
    if (sql.contains(":org")) {
      query.bind("org", orgId);
    }
    if (sql.contains(":instance")) {
      query.bind("instance", instanceId);
    }
    try (OutputStream file = Files.newOutputStream(out)) {
      long[] rows = {0};
      query
          .map((rs, ctx) -> {
            ResultSetMetaData meta = rs.getMetaData();
            ObjectNode row = Json.MAPPER.createObjectNode();
            for (int c = 1; c <= meta.getColumnCount(); c++) {
              Object value = rs.getObject(c);
              String name = meta.getColumnName(c).toLowerCase(java.util.Locale.ROOT);
              if (value instanceof byte[] bytes) {
                row.put(name, Base64.getEncoder().encodeToString(bytes));
              } else {
                row.set(name, Json.MAPPER.valueToTree(value));
              }
            }
            return row;
          })
          .forEach(row -> {
            try {
              file.write(Json.write(row).getBytes(StandardCharsets.UTF_8));
              file.write('\n');
              rows[0]++;
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
      file.flush();
      return rows[0];
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + out, e);
    } finally {
      DurableFiles.syncFile(out);
    }
  }

  /** Reads every part back against the manifest: 409 naming the first that does not match. */
  JsonNode verify(Path dir) throws IOException {
    JsonNode manifest = Json.read(Files.readString(dir.resolve("manifest.json")), JsonNode.class);
    for (JsonNode file : manifest.get("files")) {
      if (!DurableFiles.fileSha256(dir.resolve("blobs").resolve(file.get("blob").asText()))
          .equals(file.get("sha256").asText())) {
        throw ApiException.conflict(
            "snapshot_corrupted",
            "The snapshot's copy of " + file.get("path").asText() + " does not match its checksum");
      }
    }
    for (JsonNode table : manifest.get("tables")) {
      if (!DurableFiles.fileSha256(
              dir.resolve("tables").resolve(table.get("name").asText() + ".jsonl"))
          .equals(table.get("sha256").asText())) {
        throw ApiException.conflict(
            "snapshot_corrupted",
            "The snapshot's " + table.get("name").asText() + " does not match its checksum");
      }
    }
    return manifest;
  }

  /** What a restore did. */
  public record Restored(
      String snapshotId,
      String restorePath,
      int written,
      int removed,
      String safetySnapshotId,
      int rowsRestored) {}

  /**
   * Restores a complete snapshot of the instance. Into a folder ({@code restore_path} ending in
   * {@code /}): each file of the snapshot is written under it, the live files untouched. Over the
   * live data ({@code restore_path} "/"): a safety snapshot is taken first (the restore can be
   * undone by restoring it), the restore is journaled, each file is put back as it was (those
   * unchanged are left), files the snapshot did not have are removed, and then the organization's
   * rows go back (each domain's {@link OrganizationData}) in the transaction that completes the journal entry. Every
   * part is checked against the manifest before anything is written; each step is idempotent, so
   * a node that stops part way finishes the restore at its next start ({@link #resumeInterrupted}).
   */
  public Restored restore(
      Organization org,
      String instanceId,
      String snapshotId,
      String restorePath,
      FileStore.Actor actor) {
    Snapshot snapshot = get(instanceId, snapshotId);
    if (!snapshot.status().equals("complete")) {
      throw ApiException.conflict(
          "snapshot_not_complete",
          "snapshot_id",
          "Snapshot " + snapshotId + " is " + snapshot.status()
              + ": only a complete snapshot can be restored");
    }
    boolean overLive = restorePath.equals("/");
    if (!overLive) {
      if (!restorePath.endsWith("/")) {
        throw ApiException.badRequest(
            "restore_path", "'restore_path' is a folder ending in '/', or '/' for the live files");
      }
      StoragePath target = StoragePath.of(restorePath + "x", "restore_path");
      if (!target.dataClass().writableByFiles()) {
        throw ApiException.badRequest(
            "restore_path", target.dataClass().wireName() + " is written by the gateway");
      }
    }
    Path dir = Path.of(snapshot.location());
    JsonNode manifest = verified(dir, snapshotId);
    if (!overLive) {
      int written = putFiles(org, instanceId, dir, manifest, restorePath, actor);
      return new Restored(snapshotId, restorePath, written, 0, null, 0);
    }
    if (restoring(instanceId)) {
      throw restoreInProgress(instanceId);
    }
    Snapshot before = take(
        org, instanceId, "safety", "before restoring " + snapshotId, DEFAULT_RETENTION_DAYS, null);
    if (!before.status().equals("complete")) {
      throw ApiException.unavailable(
          "safety_snapshot_failed",
          "The safety snapshot before the restore failed (" + before.error()
              + "): nothing was restored");
    }
    String journal = Ids.newId("rst", clock.millis());
    try {
      db.write(h -> h.createUpdate("""
              INSERT INTO snapshot_restores (id, org_id, instance_id, snapshot_id,
                safety_snapshot_id, status, requested_by, started_at)
              VALUES (:id, :org, :instance, :snapshot, :safety, 'running', :by, :now)""")
          .bind("id", journal)
          .bind("org", org.id())
          .bind("instance", instanceId)
          .bind("snapshot", snapshotId)
          .bind("safety", before.id())
          .bind("by", actor.credentialId())
          .bind("now", clock.millis())
          .execute());
    } catch (org.jdbi.v3.core.statement.UnableToExecuteStatementException e) {
      // Another restore of the instance began meanwhile (the unique index on running ones).
      throw restoreInProgress(instanceId);
    }
    return overLive(
        new Journal(journal, org, instanceId, snapshotId, before.id(), actor), dir, manifest);
  }

  private boolean restoring(String instanceId) {
    return db.read(h ->
            h.createQuery("""
                SELECT COUNT(*) FROM snapshot_restores
                WHERE instance_id = :instance AND status = 'running'""").bind("instance", instanceId).mapTo(Integer.class).one())
        > 0;
  }

  private static ApiException restoreInProgress(String instanceId) {
    return ApiException.conflict(
        "restore_in_progress",
        "Instance " + instanceId + " is being restored; try again once it is done");
  }

  /** Adds a domain's tables to every snapshot, and its rows to every restore over live data. */
  public void include(OrganizationData part) {
    parts.add(part);
  }

  /** Every table a snapshot keeps, with the query that reads an organization's rows. */
  private Map<String, String> tables() {
    Map<String, String> tables = new java.util.LinkedHashMap<>();
    parts.forEach(part -> tables.putAll(part.tables()));
    return tables;
  }

  /**
   * Finishes the restores over live data that a stop cut short (journaled {@code running}): each
   * is run again from its start, which its idempotent steps allow. Returns how many were
   * finished; one that cannot be finished is marked failed with the reason.
   */
  public int resumeInterrupted(java.util.function.Function<String, Organization> organizations) {
    List<Map<String, Object>> running = db.read(
        h -> h.createQuery("SELECT * FROM snapshot_restores WHERE status = 'running' ORDER BY id")
            .mapToMap()
            .list());
    int finished = 0;
    for (Map<String, Object> row : running) {
      Journal journal = new Journal(
          (String) row.get("id"),
          organizations.apply((String) row.get("org_id")),
          (String) row.get("instance_id"),
          (String) row.get("snapshot_id"),
          (String) row.get("safety_snapshot_id"),
          new FileStore.Actor((String) row.get("requested_by"), (String) row.get("id")));
      String undoing = (String) row.get("error");
      try {
        if (undoing == null) {
          overLive(journal, null, null);
        } else {
          undo(journal, new IllegalStateException(undoing));
        }
        finished++;
      } catch (RuntimeException e) {
        LOG.error("restore {} could not be finished nor undone at start", journal.id(), e);
      }
    }
    return finished;
  }

  /** A restore over live data as its journal entry holds it: enough to finish or undo it. */
  private record Journal(
      String id,
      Organization org,
      String instanceId,
      String snapshotId,
      String safety,
      FileStore.Actor actor) {}

  /**
   * Runs the journaled restore; on any failure (a disk that filled, a row the database refused, a
   * snapshot that cannot be read) it is undone: the safety snapshot is put back the same way (files
   * and rows), and the entry ends {@code rolled_back}, or {@code failed} when even that failed
   * (the safety snapshot is kept; restoring it is the way back). Either way the instance is free
   * for the next restore: nothing waits for a restart.
   */
  private Restored overLive(Journal journal, Path verifiedDir, JsonNode verifiedManifest) {
    try {
      Path dir = verifiedDir;
      JsonNode manifest = verifiedManifest;
      if (dir == null) {
        dir = Path.of(get(journal.instanceId(), journal.snapshotId()).location());
        manifest = verified(dir, journal.snapshotId());
      }
      return applied(journal, dir, manifest, "complete");
    } catch (RuntimeException e) {
      throw undo(journal, e);
    }
  }

  private RuntimeException undo(Journal journal, RuntimeException cause) {
    LOG.error("restore {} of {} failed; undoing it", journal.id(), journal.snapshotId(), cause);
    String reason = reason(cause);
    // Recorded first: a node that stops while undoing undoes again at its next start.
    finish(journal.id(), "running", reason);
    try {
      if (journal.safety() == null) {
        throw new IllegalStateException("no safety snapshot");
      }
      Snapshot safety = get(journal.instanceId(), journal.safety());
      Path dir = Path.of(safety.location());
      applied(journal, dir, verified(dir, journal.safety()), "rolled_back");
    } catch (RuntimeException undoFailed) {
      LOG.error("restore {}: undoing it failed too", journal.id(), undoFailed);
      finish(
          journal.id(),
          "failed",
          reason + "; undoing it failed too (" + reason(undoFailed) + "): restore snapshot "
              + journal.safety() + " to put the data back");
      return failure(
          cause,
          "The restore failed (" + reason + ") and could not be undone ("
              + reason(undoFailed) + "): restore the safety snapshot " + journal.safety()
              + " once the cause is fixed");
    }
    return failure(
        cause,
        "The restore failed (" + reason
            + ") and was undone: the live files and rows are as they were before it");
  }

  private void finish(String journal, String status, String error) {
    Long finishedAt = status.equals("running") ? null : clock.millis();
    db.write(h -> h.createUpdate("""
            UPDATE snapshot_restores SET status = :status, error = :error,
              finished_at = :finished
            WHERE id = :id""")
        .bind("status", status)
        .bind("error", error)
        .bindByType("finished", finishedAt, Long.class)
        .bind("id", journal)
        .execute());
  }

  /**
   * The answer to a restore that failed: a refusal keeps its status and code (the storage
   * allowance, say), no room is a 507, anything else a 500 naming it; the message says whether it
   * was undone.
   */
  private static ApiException failure(RuntimeException cause, String message) {
    if (cause instanceof ApiException api && api.status() < 500) {
      return ApiException.of(api.status(), api.type(), api.code(), message, null);
    }
    if (cause instanceof ApiException api && api.status() == 507
        || io.engram.platform.http.ServerFaults.isDiskFull(cause)) {
      return ApiException.insufficientStorage(message);
    }
    return ApiException.of(
        500, io.engram.platform.http.ErrorType.SERVER_ERROR, "restore_failed", message, null);
  }

  private static String reason(Throwable failure) {
    String message = io.engram.platform.http.ServerFaults.rootMessage(failure);
    return message.length() > 300 ? message.substring(0, 300) + "..." : message;
  }

  /**
   * Makes the live files and rows those of the snapshot in {@code dir}, and ends the journal entry
   * with {@code status} in the rows' transaction.
   */
  private Restored applied(Journal journal, Path dir, JsonNode manifest, String status) {
    Organization org = journal.org();
    String instanceId = journal.instanceId();
    FileStore.Actor actor = journal.actor();
    long started = System.nanoTime();
    int written = putFiles(org, instanceId, dir, manifest, "", actor);
    Set<String> kept = new HashSet<>();
    manifest.get("files").forEach(file -> kept.add(file.get("path").asText()));
    int removed = 0;
    for (StoredFile live : files.list(instanceId, "", null, Integer.MAX_VALUE)) {
      if (!kept.contains(live.path())) {
        files.delete(org, instanceId, StoragePath.of(live.path(), "path"), actor, "delete");
        removed++;
      }
    }
    int filesRemoved = removed;
    parts.forEach(OrganizationData::settle);
    OrganizationData.Restoring restoring =
        new OrganizationData.Restoring(org.id(), instanceId, actor.requestId(), clock.millis());
    long now = restoring.now();
    SnapshotRows snapshotRows = new SnapshotRows(dir.resolve("tables"));
    List<OrganizationData.Restored> restored = db.write(h -> {
      List<OrganizationData.Restored> byPart = new ArrayList<>();
      for (OrganizationData part : parts) {
        byPart.add(part.restore(h, snapshotRows, restoring));
      }
      int rowCount = byPart.stream().mapToInt(OrganizationData.Restored::rows).sum();
      h.createUpdate("""
              UPDATE snapshot_restores SET status = :status, finished_at = :now,
                files_written = :written, files_removed = :removed, rows_restored = :rows
              WHERE id = :id""")
          .bind("status", status)
          .bind("now", now)
          .bind("written", written)
          .bind("removed", filesRemoved)
          .bind("rows", rowCount)
          .bind("id", journal.id())
          .execute();
      return byPart;
    });
    long rowsDone = System.nanoTime();
    for (int i = 0; i < parts.size(); i++) {
      parts.get(i).restored(org.id(), restored.get(i).changed());
    }
    int rows = restored.stream().mapToInt(OrganizationData.Restored::rows).sum();
    LOG.info(
        "restore {} ({}): files and rows in {} ms ({} rows), index in {} ms",
        journal.id(),
        status,
        (rowsDone - started) / 1_000_000,
        rows,
        (System.nanoTime() - rowsDone) / 1_000_000);
    return new Restored(journal.snapshotId(), "/", written, removed, journal.safety(), rows);
  }

  private JsonNode verified(Path dir, String snapshotId) {
    try {
      return verify(dir);
    } catch (IOException | UncheckedIOException e) {
      throw ApiException.conflict(
          "snapshot_corrupted", "snapshot_id", "Snapshot " + snapshotId + " cannot be read back");
    }
  }

  /** Puts each file of the snapshot under {@code prefix} ("" for the live paths); skips equal ones. */
  private int putFiles(
      Organization org,
      String instanceId,
      Path dir,
      JsonNode manifest,
      String prefix,
      FileStore.Actor actor) {
    int written = 0;
    for (JsonNode file : manifest.get("files")) {
      String path = prefix + file.get("path").asText();
      Optional<StoredFile> live = files.find(instanceId, path);
      if (live.isPresent() && live.get().sha256().equals(file.get("sha256").asText())) {
        continue;
      }
      Path blob = dir.resolve("blobs").resolve(file.get("blob").asText());
      try (InputStream in = Files.newInputStream(blob)) {
        files.put(
            org,
            instanceId,
            StoragePath.of(path, "restore_path"),
            in,
            java.util.OptionalLong.of(file.get("size").asLong()),
            file.path("content_type").isNull()
                ? null
                : file.path("content_type").asText(),
            actor);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the snapshot's " + path, e);
      }
      written++;
    }
    return written;
  }

  /**
   * The organization's snapshots begun by {@code before} that are kept (complete, or still
   * being written): copies of its data as it was then, which an erasure cannot change.
   */
  public List<Snapshot> holding(String orgId, java.time.Instant before) {
    return db.read(h -> h.createQuery("SELECT * FROM snapshots WHERE org_id = :org"
            + " AND created_at <= :before AND status IN ('complete', 'creating') ORDER BY id")
        .bind("org", orgId)
        .bind("before", before.toEpochMilli())
        .map(SNAPSHOT)
        .list());
  }

  public List<Snapshot> list(String instanceId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM snapshots WHERE instance_id = :instance ORDER BY id DESC")
            .bind("instance", instanceId)
            .map(SNAPSHOT)
            .list());
  }

  public Snapshot get(String instanceId, String id) {
    return find(id)
        .filter(snapshot -> snapshot.instanceId().equals(instanceId))
        .orElseThrow(
            () -> ApiException.notFound("snapshot_not_found", "snapshot_id", "No snapshot " + id));
  }

  public Optional<Snapshot> find(String id) {
    return db.read(h -> h.createQuery("SELECT * FROM snapshots WHERE id = :id")
        .bind("id", id)
        .map(SNAPSHOT)
        .findOne());
  }

  /** Snapshots a stop cut short are failed, and what they had written removed (at start). */
  public int failInterrupted() {
    List<Snapshot> cut =
        db.read(h -> h.createQuery("SELECT * FROM snapshots WHERE status = 'creating'")
            .map(SNAPSHOT)
            .list());
    cut.forEach(snapshot ->
        fail(snapshot.id(), Path.of(snapshot.location()), "interrupted: the server stopped"));
    return cut.size();
  }

  /** Removes snapshots past their retention (hourly). */
  public int expire() {
    List<Snapshot> old =
        db.read(h -> h.createQuery("SELECT * FROM snapshots WHERE expires_at < :now")
            .bind("now", clock.millis())
            .map(SNAPSHOT)
            .list());
    for (Snapshot snapshot : old) {
      FileStore.deleteTree(Path.of(snapshot.location()));
      db.write(h -> h.createUpdate("DELETE FROM snapshots WHERE id = :id")
          .bind("id", snapshot.id())
          .execute());
    }
    return old.size();
  }

  private void fail(String id, Path dir, String reason) {
    try {
      FileStore.deleteTree(dir);
    } catch (UncheckedIOException e) {
      // Left for expiry: the row says it failed either way.
    }
    db.write(h -> h.createUpdate(
            "UPDATE snapshots SET status = 'failed', error = :error, completed_at = :at "
                + "WHERE id = :id")
        .bind("error", reason.length() > 500 ? reason.substring(0, 500) : reason)
        .bind("at", clock.millis())
        .bind("id", id)
        .execute());
  }
}
