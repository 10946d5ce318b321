package io.engram.finetuning;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.engram.instances.InstanceServices;
import io.engram.instances.files.FileStore;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoredFile;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.MultipartReader;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * Training files: received into the organization's default instance storage (so they count
 * against its storage allowance and appear among its training data), checked line by line, and
 * recorded with what the check found.
 */
public final class TrainingFiles {
  static final long MAX_BYTES = 512L * 1024 * 1024;
  static final String FOLDER = "training_data/fine-tune/";

  private static final RowMapper<TrainingFile> ROW = (rs, ctx) -> new TrainingFile(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("instance_id"),
      rs.getString("path"),
      rs.getString("filename"),
      rs.getString("purpose"),
      rs.getLong("bytes"),
      rs.getString("status"),
      rs.getInt("examples"),
      rs.getString("problems"),
      Rows.instant(rs, "created_at"));

  private final Database db;
  private final InstanceServices storage;
  private final Clock clock;

  public TrainingFiles(Database db, InstanceServices storage, Clock clock) {
    this.db = db;
    this.storage = storage;
    this.clock = clock;
  }

  /** Receives a multipart upload (parts {@code file} and {@code purpose}, in either order). */
  public TrainingFile upload(
      Organization org, String contentType, InputStream body, FileStore.Actor actor)
      throws IOException {
    MultipartReader form = MultipartReader.of(
        contentType, body, MAX_BYTES, () -> MultipartReader.tooLarge(MAX_BYTES, "a training file"));
    String id = Ids.newId("file", clock.millis()).replace('_', '-');
    String instanceId = storage.instances().defaultOf(org.id()).id();
    StoragePath path = StoragePath.of(FOLDER + id + ".jsonl", "file");
    String purpose = null;
    String filename = null;
    StoredFile stored = null;
    try {
      Optional<MultipartReader.Part> part;
      while ((part = form.next()).isPresent()) {
        switch (part.get().name()) {
          case "purpose" -> purpose = form.text("purpose", 64);
          case "file" -> {
            if (stored != null) {
              throw ApiException.badRequest("file", "Send one 'file' part");
            }
            filename = filename(part.get().filename());
            stored = storage
                .files()
                .put(
                    org,
                    instanceId,
                    path,
                    form.content(),
                    OptionalLong.empty(),
                    "application/jsonl",
                    actor);
          }
          default ->
            throw ApiException.badRequest(
                part.get().name(),
                "Unknown form field '" + part.get().name() + "'; send 'file' and 'purpose'");
        }
      }
      if (stored == null) {
        throw ApiException.badRequest("file", "A 'file' part is required");
      }
      if (purpose == null) {
        throw ApiException.badRequest("purpose", "'purpose' is required: 'fine-tune'");
      }
      if (!purpose.equals(TrainingFile.PURPOSE)) {
        throw ApiException.badRequest(
            "purpose", "'purpose' must be 'fine-tune' (the only purpose this server takes)");
      }
    } catch (IOException | RuntimeException e) {
      if (stored != null) {
        storage.files().delete(org, instanceId, path, actor);
      }
      if (e instanceof IOException) {
        // the form is read from the client: a body cut or garbled on the way is the request's fault
        throw ApiException.badRequest("file", "The upload could not be read: " + e.getMessage());
      }
      throw e;
    }
    TrainingFileCheck.Report report;
    try (InputStream in = Files.newInputStream(storage.files().bytes(stored))) {
      report = TrainingFileCheck.read(in);
    }
    TrainingFile file = new TrainingFile(
        id,
        org.id(),
        instanceId,
        path.value(),
        filename,
        purpose,
        stored.size(),
        report.valid() ? TrainingFile.PROCESSED : TrainingFile.ERROR,
        report.conversations().size(),
        report.valid() ? null : problems(report),
        clock.instant());
    insert(file, actor.credentialId());
    return file;
  }

  private static String filename(String sent) {
    if (sent == null || sent.isBlank()) {
      return "training.jsonl";
    }
    String name = sent.replace('\\', '/');
    name = name.substring(name.lastIndexOf('/') + 1);
    return name.length() > 255 ? name.substring(0, 255) : name;
  }

  private static String problems(TrainingFileCheck.Report report) {
    var node = Json.MAPPER
        .createObjectNode()
        .put("summary", report.summary())
        .put("count", report.problemCount());
    ArrayNode lines = node.putArray("lines");
    report
        .problems()
        .forEach(p -> lines.addObject().put("line", p.line()).put("reason", p.reason()));
    return Json.write(node);
  }

  private void insert(TrainingFile file, String by) {
    db.write(h -> h.createUpdate("""
            INSERT INTO training_files (id, org_id, instance_id, path, filename, purpose, bytes,
              status, examples, problems, created_at, created_by)
            VALUES (:id, :org, :instance, :path, :filename, :purpose, :bytes, :status, :examples,
              :problems, :at, :by)""")
        .bind("id", file.id())
        .bind("org", file.orgId())
        .bind("instance", file.instanceId())
        .bind("path", file.path())
        .bind("filename", file.filename())
        .bind("purpose", file.purpose())
        .bind("bytes", file.bytes())
        .bind("status", file.status())
        .bind("examples", file.examples())
        .bind("problems", file.problems())
        .bind("at", file.createdAt().toEpochMilli())
        .bind("by", by)
        .execute());
  }

  /** The organization's file; another organization's id is not found, as one that does not exist. */
  public TrainingFile get(String orgId, String id, String param) {
    return db.read(
            h -> h.createQuery("SELECT * FROM training_files WHERE id = :id AND org_id = :org")
                .bind("id", id)
                .bind("org", orgId)
                .map(ROW)
                .findOne())
        .orElseThrow(
            () -> ApiException.notFound("file_not_found", param, "No such file: '" + id + "'"));
  }

  /** The organization's files, newest first, after the cursor {@code after} (an id). */
  public List<TrainingFile> list(String orgId, String after, int limit, boolean ascending) {
    String order = ascending ? "ASC" : "DESC";
    String cursor = after == null
        ? ""
        : ascending
            ? " AND (created_at, id) > (SELECT created_at, id FROM training_files WHERE id = :after)"
            : " AND (created_at, id) < (SELECT created_at, id FROM training_files WHERE id = :after)";
    return db.read(h -> h.createQuery("SELECT * FROM training_files WHERE org_id = :org" + cursor
            + " ORDER BY created_at " + order + ", id " + order + " LIMIT :limit")
        .bind("org", orgId)
        .bind("after", after)
        .bind("limit", limit)
        .map(ROW)
        .list());
  }

  /** The file's bytes as stored. */
  public Path content(TrainingFile file) {
    StoredFile stored = storage.files().get(file.instanceId(), StoragePath.of(file.path(), "file"));
    return storage.files().bytes(stored);
  }

  public void delete(Organization org, TrainingFile file, FileStore.Actor actor) {
    StoragePath path = StoragePath.of(file.path(), "file");
    if (storage.files().find(file.instanceId(), path.value()).isPresent()) {
      storage.files().delete(org, file.instanceId(), path, actor);
    }
    db.write(h -> h.createUpdate("DELETE FROM training_files WHERE id = :id")
        .bind("id", file.id())
        .execute());
  }

  /** Re-reads a file for a job: its conversations, or every problem. */
  public TrainingFileCheck.Report read(TrainingFile file) throws IOException {
    try (InputStream in = Files.newInputStream(content(file))) {
      return TrainingFileCheck.read(in);
    }
  }
}
