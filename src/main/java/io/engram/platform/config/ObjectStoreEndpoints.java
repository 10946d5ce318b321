package io.engram.platform.config;

import java.net.URI;
import java.util.Optional;

/**
 * Where the external object stores are reached when not at their providers' public endpoints: a
 * private S3-compatible service, a Cloud Storage proxy, an Azure Blob gateway (and, in the tests,
 * the local emulators). Empty means the provider's own endpoint. The Azure value may hold
 * {@code {account}}, replaced by each store's account name.
 */
public record ObjectStoreEndpoints(String s3, String gcs, String azureBlob) {
  public static final ObjectStoreEndpoints PROVIDERS = new ObjectStoreEndpoints("", "", "");

  public Optional<URI> s3Endpoint() {
    return s3.isEmpty() ? Optional.empty() : Optional.of(URI.create(s3));
  }

  public Optional<String> gcsEndpoint() {
    return gcs.isEmpty() ? Optional.empty() : Optional.of(gcs);
  }

  /** The blob endpoint of an account: the override with the account put in, or Azure's. */
  public String azureEndpoint(String account) {
    return azureBlob.isEmpty()
        ? "https://" + account + ".blob.core.windows.net"
        : azureBlob.replace("{account}", account);
  }
}
