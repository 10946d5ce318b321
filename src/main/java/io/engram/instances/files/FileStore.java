package io.engram.instances.files;

import io.engram.instances.storage.DataClass;
import io.engram.instances.storage.StorageLog;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StorageUsage;
import io.engram.instances.storage.StoredFile;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * The files of instances' storage. A file's bytes are a blob under the instance's folder, written
 * whole first (a temporary file, fsynced, renamed, the folder fsynced), and only then does the
 * database row of its path point at it; the blob it replaced is removed after that commit. A
 * crash at any point leaves either the old file or the new one, never part of one (an unreferenced
 * blob is swept at start). The body streams through a fixed buffer: a many-GB upload holds 64 KB
 * of memory, and its SHA-256 (the ETag) is computed on the way.
 */
public final class FileStore {
  static final int BUFFER = 256 * 1024;
  static final long FLUSH_EVERY = 16L * 1024 * 1024;
  static final long TEMPORARY_KEPT_MILLIS = 10 * 60_000L;
  private static final java.util.concurrent.Executor FLUSHER =
      java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

  private static final RowMapper<StoredFile> FILE = (rs, ctx) -> new StoredFile(
      rs.getString("instance_id"),
      rs.getString("path"),
      DataClass.of(rs.getString("data_class")).orElseThrow(),
      rs.getLong("size"),
      rs.getString("sha256"),
      rs.getString("blob"),
      rs.getString("content_type"),
      Rows.instant(rs, "created_at"),
      Rows.instant(rs, "updated_at"),
      rs.getString("updated_by"));

  /** Who writes, for the log and the row. */
  public record Actor(String credentialId, String requestId) {}

  private final Database db;
  private final Path root;
  private final StorageUsage usage;
  private final StorageLog log;
  private final Clock clock;

  public FileStore(Database db, Path root, StorageUsage usage, StorageLog log, Clock clock) {
    this.db = db;
    this.root = root;
    this.usage = usage;
    this.log = log;
    this.clock = clock;
  }

  /**
   * Writes the file at {@code path}, replacing the one there. {@code length}: the body's declared
   * length (Content-Length) when known: a body that would take the organization past its
   * allowance is refused before a byte is read; one without a length is counted as it streams
   * and refused the moment it passes.
   */
  public StoredFile put(
      Organization org,
      String instanceId,
      StoragePath path,
      InputStream body,
      OptionalLong length,
      String contentType,
      Actor actor) {
    long room = room(org, instanceId, path);
    if (length.isPresent() && length.getAsLong() > room) {
      refuseOverLimit(org, instanceId, path, length.getAsLong(), actor);
    }
    Path dir = instanceDir(instanceId);
    Path temp = dir.resolve("tmp").resolve(Ids.newId("upload", clock.millis()));
    long size;
    String sha256;
    try {
      Files.createDirectories(temp.getParent());
      MessageDigest digest = sha256();
      size = copy(body, temp, digest, room, length);
      if (size > room) {
        Files.deleteIfExists(temp);
        refuseOverLimit(org, instanceId, path, size, actor);
      }
      sha256 = HexFormat.of().formatHex(digest.digest());
    } catch (IOException e) {
      deleteQuietly(temp);
      if (io.engram.platform.http.ServerFaults.isDiskFull(e)) {
        // The server's disk, not the client's body: nothing was kept, and it may pass later.
        throw io.engram.platform.http.ServerFaults.answer(e);
      }
      throw ApiException.badRequest("body", "The upload did not arrive whole: " + e.getMessage());
    }
    return keep(org, instanceId, path, temp, size, sha256, contentType, actor);
  }

  /**
   * Keeps a file a job already wrote, fsynced and checked under the instance's folder (an
   * import's download): moved in, not copied again. Refused like an upload when it does not fit.
   */
  public StoredFile adopt(
      Organization org,
      String instanceId,
      StoragePath path,
      Path written,
      long size,
      String sha256,
      Actor actor) {
    if (size > room(org, instanceId, path)) {
      refuseOverLimit(org, instanceId, path, size, actor);
    }
    return keep(org, instanceId, path, written, size, sha256, null, actor);
  }

  /** Where a job of the instance keeps its work in progress (beside the blobs: moves are renames). */
  public Path jobDir(String instanceId, String jobId) {
    return instanceDir(instanceId).resolve("jobs").resolve(jobId);
  }

  /** Moves a written, fsynced file into the blobs and points the path at it, in one commit. */
  private StoredFile keep(
      Organization org,
      String instanceId,
      StoragePath path,
      Path written,
      long size,
      String sha256,
      String contentType,
      Actor actor) {
    Path blobs = instanceDir(instanceId).resolve("blobs");
    String blob = Ids.newId("blob", clock.millis());
    try {
      Files.createDirectories(blobs);
      Files.move(written, blob(instanceId, blob), StandardCopyOption.ATOMIC_MOVE);
      syncDirectory(blobs);
    } catch (IOException e) {
      deleteQuietly(written);
      throw new UncheckedIOException("cannot keep " + path.value(), e);
    }
    Optional<String> replaced;
    try {
      replaced = commit(org, instanceId, path, blob, size, sha256, contentType, actor);
    } catch (RuntimeException e) {
      deleteQuietly(blob(instanceId, blob));
      throw e;
    }
    replaced.ifPresent(old -> deleteQuietly(blob(instanceId, old)));
    return find(instanceId, path.value()).orElseThrow();
  }

  /** The room left for a file at this path: the allowance, less all else the organization keeps. */
  private long room(Organization org, String instanceId, StoragePath path) {
    OptionalLong allowance = usage.limits(org).bytes();
    if (allowance.isEmpty()) {
      return Long.MAX_VALUE;
    }
    long replacing = find(instanceId, path.value()).map(StoredFile::size).orElse(0L);
    long used = db.read(h -> usage.used(h, org.id()));
    return Math.max(0, allowance.getAsLong() - used + replacing);
  }

  private Optional<String> commit(
      Organization org,
      String instanceId,
      StoragePath path,
      String blob,
      long size,
      String sha256,
      String contentType,
      Actor actor) {
    long now = clock.millis();
    return db.write(h -> {
      lockOrganization(h, org.id());
      Optional<StoredFile> old = find(h, instanceId, path.value());
      // Checked again under the lock: two uploads that each fit alone must not both land.
      OptionalLong allowance = usage.limits(org).bytes();
      if (allowance.isPresent()
          && usage.used(h, org.id()) - old.map(StoredFile::size).orElse(0L) + size
              > allowance.getAsLong()) {
        throw overLimit(org, size);
      }
      h.createUpdate("""
              INSERT INTO storage_files (instance_id, org_id, path, data_class, size, sha256, blob,
                content_type, created_at, updated_at, updated_by)
              VALUES (:instance, :org, :path, :class, :size, :sha, :blob, :type, :now, :now, :by)
              ON CONFLICT (instance_id, path) DO UPDATE SET size = excluded.size,
                sha256 = excluded.sha256, blob = excluded.blob,
                content_type = excluded.content_type, updated_at = excluded.updated_at,
                updated_by = excluded.updated_by""")
          .bind("instance", instanceId)
          .bind("org", org.id())
          .bind("path", path.value())
          .bind("class", path.dataClass().wireName())
          .bind("size", size)
          .bind("sha", sha256)
          .bind("blob", blob)
          .bind("type", contentType)
          .bind("now", now)
          .bind("by", actor.credentialId())
          .execute();
      log.append(
          h,
          org.id(),
          instanceId,
          actor.credentialId(),
          old.isPresent() ? "replace" : "create",
          path.value(),
          size,
          "ok",
          actor.requestId());
      return old.map(StoredFile::blob);
    });
  }

  public Optional<StoredFile> find(String instanceId, String path) {
    return db.read(h -> find(h, instanceId, path));
  }

  /** The file, or 404 naming the path. */
  public StoredFile get(String instanceId, StoragePath path) {
    return find(instanceId, path.value())
        .orElseThrow(
            () -> ApiException.notFound("file_not_found", "path", "No file at " + path.value()));
  }

  /** Where the file's bytes are, to stream them. */
  public Path bytes(StoredFile file) {
    return blob(file.instanceId(), file.blob());
  }

  public void delete(Organization org, String instanceId, StoragePath path, Actor actor) {
    delete(org, instanceId, path, actor, "delete");
  }

  /** Deletes the file, logged as {@code action} (a client's delete, or retention's). */
  public void delete(
      Organization org, String instanceId, StoragePath path, Actor actor, String action) {
    StoredFile file = get(instanceId, path);
    int deleted = db.write(h -> {
      int rows = h.createUpdate(
              "DELETE FROM storage_files WHERE instance_id = :instance AND path = :path "
                  + "AND blob = :blob")
          .bind("instance", instanceId)
          .bind("path", path.value())
          .bind("blob", file.blob())
          .execute();
      if (rows == 1) {
        log.append(
            h,
            org.id(),
            instanceId,
            actor.credentialId(),
            action,
            path.value(),
            file.size(),
            "ok",
            actor.requestId());
      }
      return rows;
    });
    if (deleted == 0) {
      throw ApiException.notFound("file_not_found", "path", "No file at " + path.value());
    }
    deleteQuietly(bytes(file));
  }

  /**
   * Refuses (403 storage_limit_exceeded) what would take the organization past its allowance if
   * {@code bytes} more were kept: a job's whole size, checked before its first byte.
   */
  public void requireRoom(Organization org, long bytes) {
    OptionalLong allowance = usage.limits(org).bytes();
    if (allowance.isPresent()
        && db.read(h -> usage.used(h, org.id())) + bytes > allowance.getAsLong()) {
      throw overLimit(org, bytes);
    }
  }

  /** Files whose path starts with {@code prefix}, in path order, after {@code after} when given. */
  public List<StoredFile> list(String instanceId, String prefix, String after, int limit) {
    return db.read(h -> h.createQuery("SELECT * FROM storage_files WHERE instance_id = :instance"
            + " AND path >= :prefix AND path < :end"
            + (after == null ? "" : " AND path > :after")
            + " ORDER BY path LIMIT :limit")
        .bind("instance", instanceId)
        .bind("prefix", prefix)
        // Every path with the prefix sorts below the prefix followed by the highest character.
        .bind("end", prefix + Character.MAX_VALUE)
        .bindMap(after == null ? Map.of() : Map.of("after", after))
        .bind("limit", limit)
        .map(FILE)
        .list());
  }

  /** Every file of the organization's instances in one data class (retention reads them). */
  public List<StoredFile> ofClass(String orgId, DataClass dataClass) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM storage_files WHERE org_id = :org AND data_class = :class")
        .bind("org", orgId)
        .bind("class", dataClass.wireName())
        .map(FILE)
        .list());
  }

  /** Every file of an instance, read inside the caller's transaction (a snapshot's). */
  public List<StoredFile> list(Handle h, String instanceId) {
    return h.createQuery("SELECT * FROM storage_files WHERE instance_id = :instance ORDER BY path")
        .bind("instance", instanceId)
        .map(FILE)
        .list();
  }

  /** Every file of a deleted instance is gone with its folder; its rows first. */
  public void deleteInstance(String instanceId) {
    db.write(h -> h.createUpdate("DELETE FROM storage_files WHERE instance_id = :instance")
        .bind("instance", instanceId)
        .execute());
    deleteTree(instanceDir(instanceId));
  }

  /**
   * Removes what a crash left behind: temporary files, and blobs no row points at (written, but
   * the row that would have pointed at them was never committed).
   */
  public int sweep() {
    if (!Files.isDirectory(root)) {
      return 0;
    }
    int removed = 0;
    try (var instances = Files.list(root)) {
      for (Path dir : instances.toList()) {
        String instanceId = dir.getFileName().toString();
        removed += sweepTemporary(dir.resolve("tmp"));
        Path blobs = dir.resolve("blobs");
        if (!Files.isDirectory(blobs)) {
          continue;
        }
        List<String> referenced = db.read(
            h -> h.createQuery("SELECT blob FROM storage_files WHERE instance_id = :instance")
                .bind("instance", instanceId)
                .mapTo(String.class)
                .list());
        try (var files = Files.list(blobs)) {
          for (Path blob : files.toList()) {
            // A blob newer than a minute may belong to an upload about to commit.
            if (!referenced.contains(blob.getFileName().toString())
                && Files.getLastModifiedTime(blob).toMillis() < clock.millis() - 60_000) {
              deleteQuietly(blob);
              removed++;
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot sweep instance storage", e);
    }
    return removed;
  }

  /**
   * Removes the temporary files of uploads that stopped. On SQLite this node is the only one, so
   * all of them; on PostgreSQL those untouched for ten minutes (wall-clock, as file times are): a
   * younger one may be an upload another node sharing the folder is receiving right now.
   */
  private int sweepTemporary(Path tmp) throws IOException {
    if (!Files.isDirectory(tmp)) {
      return 0;
    }
    long before = db.kind() == Database.Kind.SQLITE
        ? Long.MAX_VALUE
        : System.currentTimeMillis() - TEMPORARY_KEPT_MILLIS;
    int removed = 0;
    try (var files = Files.list(tmp)) {
      for (Path file : files.toList()) {
        if (Files.getLastModifiedTime(file).toMillis() < before) {
          deleteQuietly(file);
          removed++;
        }
      }
    }
    return removed;
  }

  private void refuseOverLimit(
      Organization org, String instanceId, StoragePath path, long size, Actor actor) {
    log.record(
        org.id(),
        instanceId,
        actor.credentialId(),
        "create",
        path.value(),
        size,
        "refused: storage limit",
        actor.requestId());
    throw overLimit(org, size);
  }

  private ApiException overLimit(Organization org, long size) {
    return ApiException.forbidden(
        "storage_limit_exceeded",
        "Keeping " + size + " more bytes would take the organization past its storage allowance ("
            + org.plan().limits().storageGb() + " GB on plan " + org.plan().id()
            + "); delete files or upgrade its storage");
  }

  /**
   * Copies the body to {@code target}, at most one byte more than {@code room} (enough to know it
   * does not fit), and fsyncs it. A body shorter than its declared length did not arrive whole.
   */
  private static long copy(
      InputStream body, Path target, MessageDigest digest, long room, OptionalLong length)
      throws IOException {
    long size = 0;
    try (FileChannel channel =
            FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        OutputStream out = java.nio.channels.Channels.newOutputStream(channel)) {
      // The disk writes what arrived while the rest still arrives: every FLUSH_EVERY bytes a
      // background flush starts (one at a time), so the final fsync has only the tail to write.
      // Measured: a 1 GB upload went from 64 % to most of dd's speed (docs/benchmarks.md).
      CompletableFuture<Void> flushing = CompletableFuture.completedFuture(null);
      long flushedAt = 0;
      byte[] buffer = new byte[BUFFER];
      int read;
      while ((read = body.read(buffer)) != -1) {
        size += read;
        if (size > room) {
          flushing.join();
          return size;
        }
        digest.update(buffer, 0, read);
        out.write(buffer, 0, read);
        if (size - flushedAt >= FLUSH_EVERY && flushing.isDone()) {
          flushing.join(); // a failed flush fails the upload
          flushedAt = size;
          flushing = CompletableFuture.runAsync(() -> force(channel), FLUSHER);
        }
      }
      out.flush();
      flushing.join();
      channel.force(true);
    } catch (java.util.concurrent.CompletionException e) {
      throw e.getCause() instanceof UncheckedIOException io ? io.getCause() : new IOException(e);
    }
    if (length.isPresent() && size != length.getAsLong()) {
      throw new IOException(size + " bytes of the declared " + length.getAsLong());
    }
    return size;
  }

  private static void force(FileChannel channel) {
    try {
      channel.force(false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Storage writes of one organization take turns on PostgreSQL (SQLite has one writer). */
  private void lockOrganization(Handle h, String orgId) {
    if (db.kind() == Database.Kind.POSTGRESQL) {
      h.createQuery("SELECT id FROM organizations WHERE id = :org FOR UPDATE")
          .bind("org", orgId)
          .mapTo(String.class)
          .findOne();
    }
  }

  private static Optional<StoredFile> find(Handle h, String instanceId, String path) {
    return h.createQuery(
            "SELECT * FROM storage_files WHERE instance_id = :instance AND path = :path")
        .bind("instance", instanceId)
        .bind("path", path)
        .map(FILE)
        .findOne();
  }

  private Path instanceDir(String instanceId) {
    return root.resolve(instanceId);
  }

  private Path blob(String instanceId, String blob) {
    return instanceDir(instanceId).resolve("blobs").resolve(blob);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void syncDirectory(Path dir) {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    } catch (IOException e) {
      // Some file systems cannot open a directory to sync it; the rename is still atomic there.
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      // Left for the sweep: an unreferenced blob is removed at the next start.
    }
  }

  public static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var walk = Files.walk(dir)) {
      walk.sorted(java.util.Comparator.reverseOrder()).forEach(FileStore::deleteQuietly);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + dir, e);
    }
  }
}
