package io.engram.objectstores;

import io.engram.objectstores.ObjectStoreException.Kind;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An S3 bucket through the AWS SDK v2, on the JDK's URL connection (no second HTTP stack). With an
 * operator's endpoint (a private S3-compatible service, the tests' emulator) requests are
 * path-style. Checksums are sent only where S3 requires them: the newer default (CRC trailers in
 * chunked bodies) is not understood by every S3-compatible service, and Engram checks its own
 * SHA-256 end to end anyway.
 */
final class S3ObjectStore implements ObjectStore {
  /**
   * Files up to this go up in one PUT (S3 takes at most 5 GiB so): measured against s3rver, one
   * PUT of 1 GB ran at twice the speed of 64 MiB parts (docs/benchmarks.md). Above it, parts of
   * {@link #PART_BYTES}.
   */
  static final long SINGLE_PUT_BYTES = 5L * 1024 * 1024 * 1024;

  static final long PART_BYTES = 512L * 1024 * 1024;

  private final S3Client client;
  private final String bucket;
  private final long singlePutBytes;
  private final long partBytes;

  S3ObjectStore(
      String bucket, String region, String accessKeyId, String secret, Optional<URI> endpoint) {
    this(bucket, region, accessKeyId, secret, endpoint, SINGLE_PUT_BYTES, PART_BYTES);
  }

  /** With other sizes: the tests make the multipart path run on a few MB. */
  S3ObjectStore(
      String bucket,
      String region,
      String accessKeyId,
      String secret,
      Optional<URI> endpoint,
      long singlePutBytes,
      long partBytes) {
    this.bucket = bucket;
    this.singlePutBytes = singlePutBytes;
    this.partBytes = partBytes;
    S3ClientBuilder builder = S3Client.builder()
        .region(Region.of(region))
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, secret)))
        .httpClientBuilder(UrlConnectionHttpClient.builder()
            .connectionTimeout(Duration.ofSeconds(10))
            .socketTimeout(Duration.ofSeconds(60)))
        // Whole signed bodies, not aws-chunked ones: some S3-compatible services keep the chunk
        // framing as the object's bytes (seen with s3rver: 186 bytes stored for 14).
        .serviceConfiguration(
            S3Configuration.builder().chunkedEncodingEnabled(false).build())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
    endpoint.ifPresent(uri -> builder.endpointOverride(uri).forcePathStyle(true));
    this.client = builder.build();
  }

  @Override
  public void probe() {
    String key = ".engram-probe-" + Long.toHexString(System.nanoTime());
    // Listed under the probe's own name: nothing is found, so no page is cut short (s3rver
    // answers 500 to a truncated one-key page).
    call("list", () -> client.listObjectsV2(r -> r.bucket(bucket).prefix(key)));
    call("write", () -> client.putObject(r -> r.bucket(bucket).key(key), RequestBody.empty()));
    call("delete", () -> client.deleteObject(r -> r.bucket(bucket).key(key)));
  }

  @Override
  public List<StoredObject> list(String prefix, int max) {
    List<StoredObject> found = new ArrayList<>();
    call("list", () -> {
      for (S3Object object : client
          .listObjectsV2Paginator(r -> r.bucket(bucket).prefix(prefix).maxKeys(Math.min(max, 1000)))
          .contents()) {
        if (found.size() >= max) {
          break;
        }
        found.add(new StoredObject(object.key(), object.size(), object.lastModified(), null));
      }
      return null;
    });
    return found;
  }

  @Override
  public Optional<StoredObject> head(String key) {
    try {
      HeadObjectResponse head = client.headObject(r -> r.bucket(bucket).key(key));
      return Optional.of(new StoredObject(
          key, head.contentLength(), head.lastModified(), head.metadata().get("sha256")));
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        return Optional.empty();
      }
      throw translate("read", e);
    } catch (SdkClientException e) {
      throw translate("read", e);
    }
  }

  @Override
  public InputStream read(String key, long offset) {
    return call(
        "read",
        () -> client.getObject(r -> {
          r.bucket(bucket).key(key);
          if (offset > 0) {
            r.range("bytes=" + offset + "-");
          }
        }));
  }

  @Override
  public void write(String key, Path file, String sha256) {
    long size = file.toFile().length();
    Map<String, String> metadata = Map.of("sha256", sha256);
    if (size <= singlePutBytes) {
      call(
          "write",
          () -> client.putObject(
              r -> r.bucket(bucket).key(key).contentLength(size).metadata(metadata),
              RequestBody.fromFile(file)));
      return;
    }
    String upload = call(
            "write",
            () -> client.createMultipartUpload(r -> r.bucket(bucket).key(key).metadata(metadata)))
        .uploadId();
    try {
      List<CompletedPart> parts = new ArrayList<>();
      for (int number = 1; (long) (number - 1) * partBytes < size; number++) {
        long from = (long) (number - 1) * partBytes;
        long length = Math.min(partBytes, size - from);
        int partNumber = number;
        // A provider, not a stream: signing reads the part once for its SHA-256, then again to
        // send it, each time from a fresh slice of the file.
        String etag = call(
                "write",
                () -> client.uploadPart(
                    r -> r.bucket(bucket)
                        .key(key)
                        .uploadId(upload)
                        .partNumber(partNumber)
                        .contentLength(length),
                    RequestBody.fromContentProvider(
                        () -> FileSlice.open(file, from, length),
                        length,
                        "application/octet-stream")))
            .eTag();
        parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
      }
      call(
          "write",
          () -> client.completeMultipartUpload(r ->
              r.bucket(bucket).key(key).uploadId(upload).multipartUpload(m -> m.parts(parts))));
    } catch (RuntimeException e) {
      abort(key, upload);
      throw e;
    }
  }

  /** Drops a failed multipart upload so its parts are not billed forever. */
  private void abort(String key, String upload) {
    try {
      client.abortMultipartUpload(r -> r.bucket(bucket).key(key).uploadId(upload));
    } catch (RuntimeException ignored) {
      // The bucket's lifecycle rules are the backstop for parts left here.
    }
  }

  @Override
  public void delete(String key) {
    call("delete", () -> client.deleteObject(r -> r.bucket(bucket).key(key)));
  }

  @Override
  public void close() {
    client.close();
  }

  private <T> T call(String what, Supplier<T> call) {
    try {
      return call.get();
    } catch (S3Exception e) {
      throw translate(what, e);
    } catch (SdkClientException e) {
      throw translate(what, e);
    }
  }

  private ObjectStoreException translate(String what, S3Exception e) {
    int status = e.statusCode();
    String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
    Kind kind =
        status == 401 || status == 403 ? Kind.DENIED : status == 404 ? Kind.NOT_FOUND : Kind.FAILED;
    return new ObjectStoreException(
        kind, "S3 refused to " + what + " in bucket " + bucket + ": " + status + " " + code, e);
  }

  private ObjectStoreException translate(String what, SdkClientException e) {
    return new ObjectStoreException(
        Kind.UNREACHABLE, "S3 could not be reached to " + what + " in bucket " + bucket, e);
  }
}
