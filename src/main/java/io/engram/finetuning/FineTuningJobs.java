package io.engram.finetuning;

import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * Fine-tuning jobs, their events and checkpoints in the database. A job is claimed by one node
 * under a lease it renews while it trains; a node that stops loses the job when the lease lapses,
 * and the node that takes it resumes from the newest checkpoint.
 */
public final class FineTuningJobs {
  private static final RowMapper<FineTuningJob> ROW = (rs, ctx) -> new FineTuningJob(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("instance_id"),
      rs.getString("model"),
      rs.getString("training_file"),
      rs.getString("validation_file"),
      rs.getString("hyperparameters"),
      rs.getString("suffix"),
      rs.getLong("seed"),
      rs.getString("status"),
      rs.getString("fine_tuned_model"),
      trainedTokens(rs),
      rs.getString("error_code"),
      rs.getString("error_message"),
      rs.getString("error_param"),
      rs.getInt("cancel_requested") == 1,
      Rows.instant(rs, "created_at"),
      Rows.nullableInstant(rs, "started_at"),
      Rows.nullableInstant(rs, "finished_at"),
      rs.getString("trainer"),
      rs.getString("remote_job_id"),
      rs.getString("remote_event"));

  private static Long trainedTokens(java.sql.ResultSet rs) throws java.sql.SQLException {
    long tokens = rs.getLong("trained_tokens");
    return rs.wasNull() ? null : tokens;
  }

  /** An event of a job: a message, or a step's metrics ({@code data}, JSON). */
  public record Event(
      String id,
      String jobId,
      long createdAt,
      String level,
      String type,
      String message,
      String data) {}

  /** A checkpoint as listed: its step and metrics (JSON). */
  public record Checkpoint(String id, String jobId, int step, long createdAt, String metrics) {}

  private final Database db;
  private final Clock clock;

  public FineTuningJobs(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  public FineTuningJob create(
      String orgId,
      String instanceId,
      String model,
      String trainingFile,
      String validationFile,
      String hyperparameters,
      String suffix,
      long seed,
      String trainer,
      String by) {
    long now = clock.millis();
    String id = Ids.newId("ftjob", now).replace('_', '-');
    db.write(h -> h.createUpdate("""
            INSERT INTO fine_tuning_jobs (id, org_id, instance_id, model, training_file,
              validation_file, hyperparameters, suffix, seed, status, trainer, created_by,
              created_at)
            VALUES (:id, :org, :instance, :model, :training, :validation, :hyper, :suffix, :seed,
              'validating_files', :trainer, :by, :now)""")
        .bind("trainer", trainer)
        .bind("id", id)
        .bind("org", orgId)
        .bind("instance", instanceId)
        .bind("model", model)
        .bind("training", trainingFile)
        .bind("validation", validationFile)
        .bind("hyper", hyperparameters)
        .bind("suffix", suffix)
        .bind("seed", seed)
        .bind("by", by)
        .bind("now", now)
        .execute());
    message(id, "Validating training file: " + trainingFile);
    return get(orgId, id);
  }

  public Optional<FineTuningJob> find(String orgId, String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM fine_tuning_jobs WHERE id = :id AND org_id = :org")
            .bind("id", id)
            .bind("org", orgId)
            .map(ROW)
            .findOne());
  }

  public FineTuningJob get(String orgId, String id) {
    return find(orgId, id)
        .orElseThrow(() -> ApiException.notFound(
            "fine_tuning_job_not_found",
            "fine_tuning_job_id",
            "No such fine-tuning job: '" + id + "'"));
  }

  FineTuningJob byId(String id) {
    return db.read(h -> h.createQuery("SELECT * FROM fine_tuning_jobs WHERE id = :id")
        .bind("id", id)
        .map(ROW)
        .one());
  }

  /** The organization's jobs, newest first, after the cursor {@code after} (a job id). */
  public List<FineTuningJob> list(String orgId, String after, int limit) {
    String cursor = after == null
        ? ""
        : " AND (created_at, id) < (SELECT created_at, id FROM fine_tuning_jobs WHERE id = :after)";
    return db.read(h -> h.createQuery("SELECT * FROM fine_tuning_jobs WHERE org_id = :org" + cursor
            + " ORDER BY created_at DESC, id DESC LIMIT :limit")
        .bind("org", orgId)
        .bind("after", after)
        .bind("limit", limit)
        .map(ROW)
        .list());
  }

  /** Whether a job that has not finished reads the file. */
  public boolean fileInUse(String orgId, String fileId) {
    return db.read(h -> h.createQuery("""
            SELECT COUNT(*) FROM fine_tuning_jobs WHERE org_id = :org
              AND (training_file = :file OR validation_file = :file)
              AND status IN ('validating_files', 'queued', 'running')""")
            .bind("org", orgId)
            .bind("file", fileId)
            .mapTo(Integer.class)
            .one()
        > 0);
  }

  /** Takes the oldest job no node holds for {@code node}; the conditional update is the lock. */
  Optional<String> claim(String node, long until) {
    long now = clock.millis();
    return db.write(h -> {
      Optional<String> id =
          h.createQuery("""
              SELECT id FROM fine_tuning_jobs
              WHERE status IN ('validating_files', 'queued', 'running')
                AND (lease_until IS NULL OR lease_until < :now)
              ORDER BY created_at, id LIMIT 1""").bind("now", now).mapTo(String.class).findOne();
      if (id.isEmpty()) {
        return id;
      }
      int taken = h.createUpdate("""
              UPDATE fine_tuning_jobs SET lease_owner = :node, lease_until = :until,
                attempts = attempts + 1
              WHERE id = :id AND status IN ('validating_files', 'queued', 'running')
                AND (lease_until IS NULL OR lease_until < :now)""")
          .bind("node", node)
          .bind("until", until)
          .bind("now", now)
          .bind("id", id.get())
          .execute();
      return taken == 1 ? id : Optional.<String>empty();
    });
  }

  /** Renews the lease; false when the job is no longer this node's (its lease lapsed and another took it). */
  boolean renew(String id, String node, long until) {
    return db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET lease_until = :until
            WHERE id = :id AND lease_owner = :node
              AND status IN ('validating_files', 'queued', 'running')""")
            .bind("until", until)
            .bind("id", id)
            .bind("node", node)
            .execute()
        == 1);
  }

  /** Gives a job back at a graceful stop, so the next node to look takes it without waiting. */
  void release(String id, String node) {
    db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET lease_until = NULL
            WHERE id = :id AND lease_owner = :node
              AND status IN ('validating_files', 'queued', 'running')""").bind("id", id).bind("node", node).execute());
  }

  /** Frees every lease: at the start of the only node a SQLite database can have. */
  int releaseAll() {
    return db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET lease_until = NULL
            WHERE status IN ('validating_files', 'queued', 'running')""").execute());
  }

  void moveTo(String id, String status) {
    db.write(h -> h.createUpdate("UPDATE fine_tuning_jobs SET status = :status,"
            + " started_at = CASE WHEN :status = 'running' THEN COALESCE(started_at, :now)"
            + " ELSE started_at END WHERE id = :id")
        .bind("status", status)
        .bind("now", clock.millis())
        .bind("id", id)
        .execute());
  }

  /** The hyperparameters with every {@code auto} worked out, once the files are read. */
  void resolved(String id, String hyperparameters) {
    db.write(
        h -> h.createUpdate("UPDATE fine_tuning_jobs SET hyperparameters = :hyper WHERE id = :id")
            .bind("hyper", hyperparameters)
            .bind("id", id)
            .execute());
  }

  void succeed(String id, String fineTunedModel, long trainedTokens) {
    finish(id, FineTuningJob.SUCCEEDED, Map.of("model", fineTunedModel), trainedTokens);
  }

  void fail(String id, String code, String message, String param) {
    db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET status = 'failed', error_code = :code,
              error_message = :message, error_param = :param, finished_at = :now,
              lease_until = NULL
            WHERE id = :id AND status IN ('validating_files', 'queued', 'running')""")
        .bind("code", code)
        .bind("message", message)
        .bind("param", param)
        .bind("now", clock.millis())
        .bind("id", id)
        .execute());
    event(id, "error", "message", "Fine-tuning job failed: " + message, null);
  }

  void cancelled(String id, long trainedTokens) {
    finish(id, FineTuningJob.CANCELLED, Map.of(), trainedTokens);
    message(id, "Fine-tuning job cancelled");
  }

  private void finish(String id, String status, Map<String, String> model, long trainedTokens) {
    db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET status = :status, fine_tuned_model = :model,
              trained_tokens = :tokens, finished_at = :now, lease_until = NULL
            WHERE id = :id""")
        .bind("status", status)
        .bind("model", model.get("model"))
        .bind("tokens", trainedTokens)
        .bind("now", clock.millis())
        .bind("id", id)
        .execute());
  }

  /**
   * Asks a job to stop. One still validating or queued is cancelled at once; a running one stops
   * at its next step (its node reads the flag). Returns false when the job had already finished.
   */
  public boolean requestCancel(String id) {
    int waiting = db.write(
        h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET status = 'cancelled', cancel_requested = 1,
              finished_at = :now, lease_until = NULL
            WHERE id = :id AND status IN ('validating_files', 'queued')
              AND lease_owner IS NULL""").bind("now", clock.millis()).bind("id", id).execute());
    if (waiting == 1) {
      message(id, "Fine-tuning job cancelled");
      return true;
    }
    return db.write(h -> h.createUpdate("""
            UPDATE fine_tuning_jobs SET cancel_requested = 1
            WHERE id = :id AND status IN ('validating_files', 'queued', 'running')""").bind("id", id).execute() == 1);
  }

  boolean cancelRequested(String id) {
    return db.read(
        h -> h.createQuery("SELECT cancel_requested FROM fine_tuning_jobs WHERE id = :id")
                .bind("id", id)
                .mapTo(Integer.class)
                .one()
            == 1);
  }

  /** An informational message event of the job. */
  public void message(String jobId, String text) {
    event(jobId, "info", "message", text, null);
  }

  public void event(String jobId, String level, String type, String message, String data) {
    long now = clock.millis();
    db.write(h -> h.createUpdate("""
            INSERT INTO fine_tuning_events (id, job_id, created_at, level, type, message, data)
            VALUES (:id, :job, :now, :level, :type, :message, :data)""")
        .bind("id", Ids.newId("ftevent", now).replace('_', '-'))
        .bind("job", jobId)
        .bind("now", now)
        .bind("level", level)
        .bind("type", type)
        .bind("message", message)
        .bind("data", data)
        .execute());
  }

  /** The job's events, newest first, as OpenAI lists them. */
  public List<Event> events(String jobId, String after, int limit) {
    String cursor = after == null
        ? ""
        : " AND (created_at, id) < (SELECT created_at, id FROM fine_tuning_events WHERE id = :after)";
    return db.read(h -> h.createQuery("SELECT * FROM fine_tuning_events WHERE job_id = :job"
            + cursor + " ORDER BY created_at DESC, id DESC LIMIT :limit")
        .bind("job", jobId)
        .bind("after", after)
        .bind("limit", limit)
        .map((rs, ctx) -> new Event(
            rs.getString("id"),
            rs.getString("job_id"),
            rs.getLong("created_at"),
            rs.getString("level"),
            rs.getString("type"),
            rs.getString("message"),
            rs.getString("data")))
        .list());
  }

  void checkpoint(String jobId, int step, String metrics) {
    long now = clock.millis();
    db.write(h -> {
      h.createUpdate("DELETE FROM fine_tuning_checkpoints WHERE job_id = :job AND step = :step")
          .bind("job", jobId)
          .bind("step", step)
          .execute();
      return h.createUpdate("""
              INSERT INTO fine_tuning_checkpoints (id, job_id, step, created_at, metrics)
              VALUES (:id, :job, :step, :now, :metrics)""")
          .bind("id", Ids.newId("ftckpt", now).replace('_', '-'))
          .bind("job", jobId)
          .bind("step", step)
          .bind("now", now)
          .bind("metrics", metrics)
          .execute();
    });
  }

  /** The job's checkpoints, newest first. */
  public List<Checkpoint> checkpoints(String jobId, String after, int limit) {
    String cursor = after == null
        ? ""
        : " AND step < (SELECT step FROM fine_tuning_checkpoints" + " WHERE id = :after)";
    return db.read(h -> h.createQuery("SELECT * FROM fine_tuning_checkpoints WHERE job_id = :job"
            + cursor + " ORDER BY step DESC LIMIT :limit")
        .bind("job", jobId)
        .bind("after", after)
        .bind("limit", limit)
        .map((rs, ctx) -> new Checkpoint(
            rs.getString("id"),
            rs.getString("job_id"),
            rs.getInt("step"),
            rs.getLong("created_at"),
            rs.getString("metrics")))
        .list());
  }

  /** The job whose fine-tuned model this is, if one is. */
  public Optional<FineTuningJob> byModel(String orgId, String model) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM fine_tuning_jobs WHERE org_id = :org AND fine_tuned_model = :model"
                + " AND model_deleted = 0")
        .bind("org", orgId)
        .bind("model", model)
        .map(ROW)
        .findOne());
  }

  /** The upstream's job that mirrors this one, once created there. */
  void remoteJob(String id, String remoteJobId) {
    db.write(
        h -> h.createUpdate("UPDATE fine_tuning_jobs SET remote_job_id = :remote WHERE id = :id")
            .bind("remote", remoteJobId)
            .bind("id", id)
            .execute());
  }

  /** The newest upstream event already copied into this job's events. */
  void remoteEventSeen(String id, String remoteEventId) {
    db.write(h -> h.createUpdate("UPDATE fine_tuning_jobs SET remote_event = :event WHERE id = :id")
        .bind("event", remoteEventId)
        .bind("id", id)
        .execute());
  }

  /** The organization's succeeded upstream jobs whose models are not deleted. */
  List<FineTuningJob> upstreamModels(String orgId) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM fine_tuning_jobs WHERE org_id = :org AND trainer = 'upstream'
              AND status = 'succeeded' AND model_deleted = 0 ORDER BY created_at, id""").bind("org", orgId).map(ROW).list());
  }

  void modelDeleted(String id) {
    db.write(h -> h.createUpdate("UPDATE fine_tuning_jobs SET model_deleted = 1 WHERE id = :id")
        .bind("id", id)
        .execute());
  }
}
