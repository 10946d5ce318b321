package io.engram.objectstores;

import com.google.api.gax.retrying.RetrySettings;
import com.google.auth.oauth2.ServiceAccountCredentials;
import com.google.cloud.BaseServiceException;
import com.google.cloud.ReadChannel;
import com.google.cloud.storage.Blob;
import com.google.cloud.storage.BlobId;
import com.google.cloud.storage.BlobInfo;
import com.google.cloud.storage.Storage;
import com.google.cloud.storage.StorageOptions;
import io.engram.objectstores.ObjectStoreException.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A Cloud Storage bucket through Google's client over its JSON API (HTTP, not gRPC), signed in
 * with a service account. Retries are bounded like the other stores'.
 */
final class GcsObjectStore implements ObjectStore {
  private final Storage storage;
  private final String bucket;

  GcsObjectStore(
      String bucket,
      String projectId,
      ServiceAccountCredentials credentials,
      Optional<String> host) {
    this.bucket = bucket;
    StorageOptions.Builder options = StorageOptions.http()
        .setProjectId(projectId)
        .setCredentials(credentials)
        .setRetrySettings(RetrySettings.newBuilder()
            .setMaxAttempts(3)
            .setInitialRetryDelayDuration(Duration.ofMillis(500))
            .setMaxRetryDelayDuration(Duration.ofSeconds(4))
            .setTotalTimeoutDuration(Duration.ofMinutes(3))
            .build());
    host.ifPresent(options::setHost);
    this.storage = options.build().getService();
  }

  @Override
  public void probe() {
    BlobId probe = BlobId.of(bucket, ".engram-probe-" + Long.toHexString(System.nanoTime()));
    call("list", () -> storage.list(bucket, Storage.BlobListOption.pageSize(1)));
    call("write", () -> storage.create(BlobInfo.newBuilder(probe).build(), new byte[0]));
    call("delete", () -> storage.delete(probe));
  }

  @Override
  public List<StoredObject> list(String prefix, int max) {
    List<StoredObject> found = new ArrayList<>();
    call("list", () -> {
      for (Blob blob : storage
          .list(
              bucket,
              Storage.BlobListOption.prefix(prefix),
              Storage.BlobListOption.pageSize(Math.min(max, 1000)))
          .iterateAll()) {
        if (found.size() >= max) {
          break;
        }
        found.add(describe(blob));
      }
      return null;
    });
    return found;
  }

  @Override
  public Optional<StoredObject> head(String key) {
    return Optional.ofNullable(call("read", () -> storage.get(BlobId.of(bucket, key))))
        .map(GcsObjectStore::describe);
  }

  @Override
  public InputStream read(String key, long offset) {
    return call("read", () -> {
      ReadChannel reader = storage.reader(BlobId.of(bucket, key));
      try {
        reader.seek(offset);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return Channels.newInputStream(reader);
    });
  }

  @Override
  public void write(String key, Path file, String sha256) {
    call("write", () -> {
      try {
        return storage.createFrom(
            BlobInfo.newBuilder(bucket, key)
                .setMetadata(Map.of("sha256", sha256))
                .build(),
            file);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  @Override
  public void delete(String key) {
    call("delete", () -> storage.delete(BlobId.of(bucket, key)));
  }

  @Override
  public void close() {
    try {
      storage.close();
    } catch (Exception ignored) {
      // Nothing is pending once a call has returned.
    }
  }

  /**
   * Google's token endpoint refused the service account: the store never saw a request. (The
   * library's exception type is package-private, so it is known by name.)
   */
  private static boolean refusedSignIn(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause.getClass().getName().equals("com.google.auth.oauth2.GoogleAuthException")) {
        return true;
      }
    }
    return false;
  }

  private static String rootCause(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.toString();
  }

  private static StoredObject describe(Blob blob) {
    return new StoredObject(
        blob.getName(),
        blob.getSize() == null ? 0 : blob.getSize(),
        blob.getUpdateTimeOffsetDateTime() == null
            ? Instant.EPOCH
            : blob.getUpdateTimeOffsetDateTime().toInstant(),
        blob.getMetadata() == null ? null : blob.getMetadata().get("sha256"));
  }

  private <T> T call(String what, Supplier<T> call) {
    try {
      return call.get();
    } catch (BaseServiceException e) {
      int status = e.getCode();
      Kind kind = status == 401 || status == 403 || refusedSignIn(e)
          ? Kind.DENIED
          : status == 404 ? Kind.NOT_FOUND : status == 0 ? Kind.UNREACHABLE : Kind.FAILED;
      throw new ObjectStoreException(
          kind,
          "Cloud Storage refused to " + what + " in bucket " + bucket + ": "
              + (status == 0 ? rootCause(e) : status + " " + e.getMessage()),
          e);
    } catch (RuntimeException e) {
      throw new ObjectStoreException(
          Kind.UNREACHABLE, "Cloud Storage could not be reached to " + what + " in " + bucket, e);
    }
  }
}
