package io.engram.instances.files;

import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * The jobs of instances' storage in the database: asked for (planned, with their items), claimed
 * by one node under a lease, advanced item by item, and finished. {@link JobRunner} runs them.
 */
public final class StorageJobs {
  /** One file of a job, and how far it got. */
  record Item(
      int seq, String source, String destination, long bytes, boolean done, long bytesDone) {}

  private final Database db;
  private final Clock clock;

  public StorageJobs(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Records a planned job, queued; the organization's allowance is checked first for inbound. */
  public StorageJob submit(
      Organization org,
      String instanceId,
      StorageJob.Kind kind,
      String source,
      String destination,
      String destinationInstance,
      List<JobPlans.Planned> items,
      String by) {
    long now = clock.millis();
    String id = Ids.newId("sjob", now);
    long total = items.stream().mapToLong(JobPlans.Planned::bytes).sum();
    db.write(h -> {
      h.createUpdate("""
              INSERT INTO storage_jobs (id, org_id, instance_id, kind, source, destination,
                destination_instance, status, planned, files_total, bytes_total, requested_by,
                created_at, updated_at)
              VALUES (:id, :org, :instance, :kind, :source, :destination, :to, 'queued', 1,
                :files, :bytes, :by, :now, :now)""")
          .bind("id", id)
          .bind("org", org.id())
          .bind("instance", instanceId)
          .bind("kind", kind.wireName())
          .bind("source", source)
          .bind("destination", destination)
          .bind("to", destinationInstance)
          .bind("files", items.size())
          .bind("bytes", total)
          .bind("by", by)
          .bind("now", now)
          .execute();
      var batch = h.prepareBatch("""
          INSERT INTO storage_job_items (job_id, seq, source, destination, bytes, status)
          VALUES (:job, :seq, :source, :destination, :bytes, 'pending')""");
      for (int i = 0; i < items.size(); i++) {
        JobPlans.Planned item = items.get(i);
        batch
            .bind("job", id)
            .bind("seq", i)
            .bind("source", item.source())
            .bind("destination", item.destination())
            .bind("bytes", item.bytes())
            .add();
      }
      batch.execute();
      return null;
    });
    return find(instanceId, id).orElseThrow();
  }

  public Optional<StorageJob> find(String instanceId, String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM storage_jobs WHERE instance_id = :instance AND id = :id")
            .bind("instance", instanceId)
            .bind("id", id)
            .map((rs, c) -> job(rs))
            .findOne());
  }

  StorageJob get(String id) {
    return db.read(h -> h.createQuery("SELECT * FROM storage_jobs WHERE id = :id")
        .bind("id", id)
        .map((rs, c) -> job(rs))
        .one());
  }

  /** The instance's jobs, newest first, before {@code before} when given. */
  public List<StorageJob> list(String instanceId, String before, int limit) {
    return db.read(h -> h.createQuery("SELECT * FROM storage_jobs WHERE instance_id = :instance"
            + (before == null ? "" : " AND id < :before")
            + " ORDER BY id DESC LIMIT :limit")
        .bind("instance", instanceId)
        .bind("before", before)
        .bind("limit", limit)
        .map((rs, c) -> job(rs))
        .list());
  }

  /** Cancels a job not yet finished; its node stops at the next item or progress mark. */
  public StorageJob cancel(String instanceId, String id) {
    StorageJob job = find(instanceId, id)
        .orElseThrow(() -> ApiException.notFound("job_not_found", "job_id", "No job " + id));
    if (job.finished()) {
      throw ApiException.conflict(
          "job_finished", "job_id", "Job " + id + " already " + job.status());
    }
    finish(id, null, "cancelled", null, null);
    return find(instanceId, id).orElseThrow();
  }

  /**
   * Takes the oldest job no node holds (queued, or running with a lapsed lease) for {@code node},
   * until {@code until}. The conditional update is the lock: of two nodes, one wins.
   */
  Optional<String> claim(String node, long until) {
    long now = clock.millis();
    return db.write(h -> {
      Optional<String> id =
          h.createQuery("""
              SELECT id FROM storage_jobs
              WHERE status IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < :now)
              ORDER BY created_at, id LIMIT 1""").bind("now", now).mapTo(String.class).findOne();
      if (id.isEmpty()) {
        return id;
      }
      int taken = h.createUpdate("""
              UPDATE storage_jobs SET status = 'running', lease_owner = :node,
                lease_until = :until, attempts = attempts + 1,
                started_at = COALESCE(started_at, :now), updated_at = :now
              WHERE id = :id AND status IN ('queued', 'running')
                AND (lease_until IS NULL OR lease_until < :now)""")
          .bind("node", node)
          .bind("until", until)
          .bind("now", now)
          .bind("id", id.get())
          .execute();
      return taken == 1 ? id : Optional.<String>empty();
    });
  }

  /** Frees every lease: at the start of the only node a SQLite database can have. */
  int releaseAll() {
    return db.write(
        h -> h.createUpdate("UPDATE storage_jobs SET lease_until = NULL WHERE status = 'running'")
            .execute());
  }

  /**
   * Extends the lease and records progress; false when the job is no longer this node's to run
   * (cancelled, or its lease lapsed and another node took it).
   */
  boolean heartbeat(String id, String node, long until, long bytesDone) {
    return db.write(h -> h.createUpdate("""
                UPDATE storage_jobs SET lease_until = :until, updated_at = :now,
                  bytes_done = CASE WHEN :bytes < 0 THEN bytes_done ELSE :bytes END
                WHERE id = :id AND lease_owner = :node AND status = 'running'""")
            .bind("until", until)
            .bind("now", clock.millis())
            .bind("bytes", bytesDone)
            .bind("id", id)
            .bind("node", node)
            .execute())
        == 1;
  }

  /** Records how far a download got, once what it reached is on disk. */
  void itemProgress(String id, int seq, long bytesDone) {
    db.write(h -> h.createUpdate(
            "UPDATE storage_job_items SET bytes_done = :done WHERE job_id = :id AND seq = :seq")
        .bind("done", bytesDone)
        .bind("id", id)
        .bind("seq", seq)
        .execute());
  }

  List<Item> items(String id) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM storage_job_items WHERE job_id = :id ORDER BY seq")
        .bind("id", id)
        .map((rs, c) -> new Item(
            rs.getInt("seq"),
            rs.getString("source"),
            rs.getString("destination"),
            rs.getLong("bytes"),
            rs.getString("status").equals("done"),
            rs.getLong("bytes_done")))
        .list());
  }

  /** An item carried: counted in the job, in one transaction with the item. */
  void itemDone(String id, Item item, long bytes, String sha256) {
    db.write(h -> {
      h.createUpdate("""
              UPDATE storage_job_items SET status = 'done', bytes_done = :bytes, sha256 = :sha
              WHERE job_id = :id AND seq = :seq""")
          .bind("bytes", bytes)
          .bind("sha", sha256)
          .bind("id", id)
          .bind("seq", item.seq())
          .execute();
      h.createUpdate("""
              UPDATE storage_jobs SET files_done = files_done + 1,
                bytes_total = bytes_total + :grown, bytes_done = :done, updated_at = :now
              WHERE id = :id""")
          .bind("grown", bytes - item.bytes())
          .bind("done", doneBytes(h, id))
          .bind("now", clock.millis())
          .bind("id", id)
          .execute();
      return null;
    });
  }

  private static long doneBytes(Handle h, String id) {
    return h.createQuery("""
            SELECT COALESCE(SUM(bytes_done), 0) FROM storage_job_items
            WHERE job_id = :id AND status = 'done'""").bind("id", id).mapTo(Long.class).one();
  }

  /** Ends a job held by {@code node} (or any, when null), unless it already ended. */
  boolean finish(String id, String node, String status, String code, String message) {
    long now = clock.millis();
    return db.write(h -> h.createUpdate("UPDATE storage_jobs SET status = :status,"
                + " error_code = :code, error_message = :message, finished_at = :now,"
                + " updated_at = :now, lease_until = NULL"
                + " WHERE id = :id AND status IN ('queued', 'running')"
                + (node == null ? "" : " AND lease_owner = :node"))
            .bind("status", status)
            .bind("code", code)
            .bind("message", message == null ? null : truncate(message))
            .bind("now", now)
            .bind("id", id)
            .bind("node", node)
            .execute())
        == 1;
  }

  /** Gives a job back to be tried again no earlier than {@code notBefore}. */
  void retryLater(String id, String node, long notBefore, String message) {
    db.write(h -> h.createUpdate("""
            UPDATE storage_jobs SET lease_until = :until, lease_owner = NULL,
              error_message = :message, updated_at = :now
            WHERE id = :id AND lease_owner = :node AND status = 'running'""")
        .bind("until", notBefore)
        .bind("message", truncate(message))
        .bind("now", clock.millis())
        .bind("id", id)
        .bind("node", node)
        .execute());
  }

  private static String truncate(String message) {
    return message.length() > 1000 ? message.substring(0, 1000) : message;
  }

  private static StorageJob job(ResultSet rs) throws SQLException {
    return new StorageJob(
        rs.getString("id"),
        rs.getString("org_id"),
        rs.getString("instance_id"),
        StorageJob.Kind.of(rs.getString("kind")),
        rs.getString("source"),
        rs.getString("destination"),
        rs.getString("destination_instance"),
        rs.getString("status"),
        rs.getInt("files_total"),
        rs.getInt("files_done"),
        rs.getLong("bytes_total"),
        rs.getLong("bytes_done"),
        rs.getInt("attempts"),
        rs.getString("error_code"),
        rs.getString("status").equals("failed") ? rs.getString("error_message") : null,
        rs.getString("requested_by"),
        Instant.ofEpochMilli(rs.getLong("created_at")),
        instant(rs, "started_at"),
        instant(rs, "finished_at"));
  }

  private static Instant instant(ResultSet rs, String column) throws SQLException {
    long millis = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochMilli(millis);
  }
}
