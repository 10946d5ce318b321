package io.engram.instances.files;

import io.engram.instances.storage.StorageLog;
import io.engram.instances.storage.StoragePath;
import io.engram.instances.storage.StoredFile;
import io.engram.objectstores.ObjectStore;
import io.engram.objectstores.ObjectStoreConnections;
import io.engram.objectstores.ObjectUri;
import io.engram.objectstores.StoredObject;
import io.engram.organizations.Organization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.OptionalLong;

/**
 * Carries one item of a job and checks it arrived whole: a download's SHA-256 against the one an
 * export wrote into the object's metadata (and its size always), an upload's size and checksum
 * as the store then describes the object, a copy's checksum against its source's.
 */
public final class JobTransfers {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(JobTransfers.class);
  /** A download records how far it got every this many bytes, fsynced first. */
  static final long MARK_EVERY = 8L * 1024 * 1024;

  /** A job cannot go on: its error code and message, and no retry. */
  static final class Failure extends RuntimeException {
    final String code;

    Failure(String code, String message) {
      super(message);
      this.code = code;
    }
  }

  /** Told how far an item got; false when the job is no longer this node's to run. */
  interface Progress {
    boolean reached(long itemBytes);
  }

  /** The job was cancelled or taken over: stop without recording anything more. */
  static final class Stopped extends RuntimeException {
    Stopped() {
      super("the job is no longer this node's", null, false, false);
    }
  }

  private final FileStore files;
  private final ObjectStoreConnections stores;
  private final StorageLog log;

  public JobTransfers(FileStore files, ObjectStoreConnections stores, StorageLog log) {
    this.files = files;
    this.stores = stores;
    this.log = log;
  }

  /** What arrived: its size and SHA-256. */
  record Carried(long bytes, String sha256) {}

  /** Carries the item. */
  Carried carry(
      Organization org, StorageJob job, StorageJobs.Item item, StorageJobs jobs, Progress progress)
      throws IOException {
    return switch (job.kind()) {
      case IMPORT -> download(org, job, item, jobs, progress);
      case EXPORT -> upload(org, job, item);
      case COPY -> copy(org, job, item);
    };
  }

  /**
   * Downloads into the job's folder, resuming from the last fsynced mark, then moves the file
   * into the instance (a rename: the bytes are not written twice).
   */
  private Carried download(
      Organization org, StorageJob job, StorageJobs.Item item, StorageJobs jobs, Progress progress)
      throws IOException {
    ObjectUri source = ObjectUri.parse(job.source(), "source");
    Path dir = Files.createDirectories(files.jobDir(job.instanceId(), job.id()));
    Path part = dir.resolve(item.seq() + ".part");
    MessageDigest digest = sha256();
    long size;
    try (ObjectStore store = stores.open(job.instanceId(), source, "source");
        FileChannel channel = FileChannel.open(
            part, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      StoredObject object = store
          .head(item.source())
          .orElseThrow(() -> new Failure(
              "object_not_found", "The object " + item.source() + " is gone from the store"));
      // Resumed from what is both marked and on disk; an object that changed starts over.
      long offset = object.size() == item.bytes() ? Math.min(item.bytesDone(), channel.size()) : 0;
      channel.truncate(offset);
      if (offset > 0) {
        LOG.info(
            "storage job {} resumes {} at byte {} of {}",
            job.id(),
            item.source(),
            offset,
            object.size());
      }
      hashPrefix(channel, offset, digest);
      channel.position(offset);
      long reached = offset;
      long marked = offset;
      if (offset < object.size()) {
        try (InputStream in = store.read(item.source(), offset)) {
          byte[] buffer = new byte[FileStore.BUFFER];
          int read;
          while ((read = in.read(buffer)) != -1) {
            digest.update(buffer, 0, read);
            ByteBuffer chunk = ByteBuffer.wrap(buffer, 0, read);
            while (chunk.hasRemaining()) {
              channel.write(chunk);
            }
            reached += read;
            if (reached - marked >= MARK_EVERY) {
              channel.force(false);
              jobs.itemProgress(job.id(), item.seq(), reached);
              marked = reached;
              if (!progress.reached(reached)) {
                throw new Stopped();
              }
            }
          }
        }
      }
      channel.force(true);
      size = reached;
      if (size != object.size()) {
        throw new IOException("the store sent " + size + " of " + object.size() + " bytes");
      }
      String sha = HexFormat.of().formatHex(digest.digest());
      if (object.sha256() != null && !object.sha256().equalsIgnoreCase(sha)) {
        Files.deleteIfExists(part);
        throw new Failure(
            "checksum_mismatch",
            item.source() + " arrived with SHA-256 " + sha + ", not the " + object.sha256()
                + " it was written with");
      }
      files.adopt(
          org,
          job.instanceId(),
          StoragePath.of(item.destination(), "destination"),
          part,
          size,
          sha,
          actor(job));
      return new Carried(size, sha);
    }
  }

  /**
   * Uploads a hard link of the file's blob (a file replaced meanwhile leaves the link whole),
   * then checks the object the store now describes.
   */
  private Carried upload(Organization org, StorageJob job, StorageJobs.Item item)
      throws IOException {
    ObjectUri destination = ObjectUri.parse(job.destination(), "destination");
    StoredFile file = files
        .find(job.instanceId(), item.source())
        .orElseThrow(() ->
            new Failure("file_not_found", item.source() + " was deleted before it was exported"));
    Path dir = Files.createDirectories(files.jobDir(job.instanceId(), job.id()));
    Path pinned = dir.resolve(item.seq() + ".blob");
    Files.deleteIfExists(pinned);
    try {
      Files.createLink(pinned, files.bytes(file));
    } catch (UnsupportedOperationException | IOException e) {
      Files.copy(files.bytes(file), pinned, StandardCopyOption.REPLACE_EXISTING);
    }
    try (ObjectStore store = stores.open(job.instanceId(), destination, "destination")) {
      store.write(item.destination(), pinned, file.sha256());
      StoredObject written = store
          .head(item.destination())
          .orElseThrow(() -> new IOException(item.destination() + " is not in the store yet"));
      if (written.size() != file.size()
          || written.sha256() != null && !written.sha256().equalsIgnoreCase(file.sha256())) {
        throw new Failure(
            "checksum_mismatch",
            item.destination() + " holds " + written.size() + " bytes after the export of "
                + file.size());
      }
    } finally {
      Files.deleteIfExists(pinned);
    }
    log.record(
        org.id(),
        job.instanceId(),
        job.requestedBy(),
        "export",
        item.source(),
        file.size(),
        "ok: " + new ObjectUri(destination.provider(), destination.bucket(), item.destination()),
        job.id());
    return new Carried(file.size(), file.sha256());
  }

  private Carried copy(Organization org, StorageJob job, StorageJobs.Item item) throws IOException {
    StoredFile file = files
        .find(job.instanceId(), item.source())
        .orElseThrow(() ->
            new Failure("file_not_found", item.source() + " was deleted before it was copied"));
    StoredFile copied;
    try (InputStream in = Files.newInputStream(files.bytes(file))) {
      copied = files.put(
          org,
          job.destinationInstance(),
          StoragePath.of(item.destination(), "destination_path"),
          in,
          OptionalLong.of(file.size()),
          file.contentType(),
          actor(job));
    }
    if (!copied.sha256().equals(file.sha256())) {
      throw new Failure("checksum_mismatch", item.source() + " changed while it was copied");
    }
    return new Carried(copied.size(), copied.sha256());
  }

  private static FileStore.Actor actor(StorageJob job) {
    return new FileStore.Actor(job.requestedBy(), job.id());
  }

  private static void hashPrefix(FileChannel channel, long length, MessageDigest digest)
      throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(FileStore.BUFFER);
    long position = 0;
    while (position < length) {
      buffer.clear().limit((int) Math.min(buffer.capacity(), length - position));
      int read = channel.read(buffer, position);
      if (read < 0) {
        throw new IOException("the partial download is shorter than its mark");
      }
      position += read;
      buffer.flip();
      digest.update(buffer);
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
