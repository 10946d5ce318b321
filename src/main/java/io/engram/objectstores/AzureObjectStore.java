package io.engram.objectstores;

import com.azure.core.exception.HttpResponseException;
import com.azure.core.http.jdk.httpclient.JdkHttpClientBuilder;
import com.azure.core.util.Context;
import com.azure.storage.blob.BlobClient;
import com.azure.storage.blob.BlobContainerClient;
import com.azure.storage.blob.BlobServiceClientBuilder;
import com.azure.storage.blob.models.BlobItem;
import com.azure.storage.blob.models.BlobProperties;
import com.azure.storage.blob.models.BlobRange;
import com.azure.storage.blob.models.ListBlobsOptions;
import com.azure.storage.blob.options.BlobInputStreamOptions;
import com.azure.storage.blob.options.BlobUploadFromFileOptions;
import com.azure.storage.common.StorageSharedKeyCredential;
import com.azure.storage.common.policy.RequestRetryOptions;
import com.azure.storage.common.policy.RetryPolicyType;
import io.engram.objectstores.ObjectStoreException.Kind;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * An Azure Blob container through the Azure Storage SDK, on the JDK's HTTP client, with a shared
 * key. Retries are bounded (three tries, a minute each) so a store that is down fails a job in
 * minutes rather than holding it for the SDK's default hour.
 */
final class AzureObjectStore implements ObjectStore {
  private final BlobContainerClient container;

  AzureObjectStore(String endpoint, String account, String containerName, String accessKey) {
    this.container = new BlobServiceClientBuilder()
        .endpoint(endpoint)
        .credential(new StorageSharedKeyCredential(account, accessKey))
        .httpClient(new JdkHttpClientBuilder().build())
        .retryOptions(new RequestRetryOptions(
            RetryPolicyType.EXPONENTIAL,
            3,
            Duration.ofSeconds(60),
            Duration.ofMillis(500),
            Duration.ofSeconds(4),
            null))
        .buildClient()
        .getBlobContainerClient(containerName);
  }

  @Override
  public void probe() {
    BlobClient blob =
        container.getBlobClient(".engram-probe-" + Long.toHexString(System.nanoTime()));
    call(
        "list",
        () -> container
            .listBlobs(new ListBlobsOptions().setMaxResultsPerPage(1), null)
            .iterator()
            .hasNext());
    call("write", () -> {
      blob.upload(com.azure.core.util.BinaryData.fromBytes(new byte[0]), true);
      return null;
    });
    call("delete", () -> {
      blob.delete();
      return null;
    });
  }

  @Override
  public List<StoredObject> list(String prefix, int max) {
    List<StoredObject> found = new ArrayList<>();
    call("list", () -> {
      for (BlobItem item : container.listBlobs(
          new ListBlobsOptions().setPrefix(prefix).setMaxResultsPerPage(Math.min(max, 5000)),
          null)) {
        if (found.size() >= max) {
          break;
        }
        found.add(new StoredObject(
            item.getName(),
            item.getProperties().getContentLength(),
            item.getProperties().getLastModified().toInstant(),
            null));
      }
      return null;
    });
    return found;
  }

  @Override
  public Optional<StoredObject> head(String key) {
    try {
      BlobProperties properties = container.getBlobClient(key).getProperties();
      return Optional.of(new StoredObject(
          key,
          properties.getBlobSize(),
          properties.getLastModified().toInstant(),
          properties.getMetadata() == null ? null : properties.getMetadata().get("sha256")));
    } catch (HttpResponseException e) {
      if (e.getResponse() != null && e.getResponse().getStatusCode() == 404) {
        return Optional.empty();
      }
      throw translate("read", e);
    } catch (RuntimeException e) {
      throw translate("read", e);
    }
  }

  @Override
  public InputStream read(String key, long offset) {
    return call(
        "read",
        () -> container
            .getBlobClient(key)
            .openInputStream(new BlobInputStreamOptions().setRange(new BlobRange(offset))));
  }

  @Override
  public void write(String key, Path file, String sha256) {
    call(
        "write",
        () -> container
            .getBlobClient(key)
            .uploadFromFileWithResponse(
                new BlobUploadFromFileOptions(file.toString())
                    .setMetadata(Map.of("sha256", sha256)),
                null,
                Context.NONE));
  }

  @Override
  public void delete(String key) {
    call("delete", () -> {
      container.getBlobClient(key).delete();
      return null;
    });
  }

  @Override
  public void close() {
    // The JDK client holds no connection that outlives its idle timeout.
  }

  private <T> T call(String what, Supplier<T> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      throw translate(what, e);
    }
  }

  private ObjectStoreException translate(String what, RuntimeException e) {
    String where = "container " + container.getBlobContainerName();
    if (e instanceof HttpResponseException http && http.getResponse() != null) {
      int status = http.getResponse().getStatusCode();
      Kind kind = status == 401 || status == 403
          ? Kind.DENIED
          : status == 404 ? Kind.NOT_FOUND : Kind.FAILED;
      return new ObjectStoreException(
          kind, "Azure refused to " + what + " in " + where + ": " + status, e);
    }
    return new ObjectStoreException(
        Kind.UNREACHABLE, "Azure could not be reached to " + what + " in " + where, e);
  }
}
