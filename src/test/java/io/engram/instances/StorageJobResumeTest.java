package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.BesideTheRest;
import io.engram.support.Http;
import io.engram.support.ObjectStoreEmulators;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * kill -9 in the middle of an import: at the next start the job is taken up again, the download
 * goes on from the byte it had reached (not from zero), and the file that lands is the object,
 * byte for byte.
 */
@BesideTheRest
class StorageJobResumeTest {
  private static final int SIZE = 200 * 1024 * 1024;

  @TempDir
  Path dataDir;

  private Map<String, String> env() {
    return Map.of(
        "ENGRAM_DATA_DIR", dataDir.toString(),
        "ENGRAM_ADMIN_KEY", TestServer.ADMIN_KEY,
        "ENGRAM_S3_ENDPOINT", ObjectStoreEmulators.s3(),
        "LOG_FILE_PATH", dataDir.resolve("app.log").toString());
  }

  @Test
  void aCutImportResumesWhereItStoppedAndLandsWhole() throws Exception {
    String endpoint = ObjectStoreEmulators.s3();
    Path object = Files.createTempFile("engram-resume", ".bin");
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    byte[] block = new byte[1024 * 1024];
    Random random = new Random(7);
    try (OutputStream out = Files.newOutputStream(object)) {
      for (int i = 0; i < SIZE / block.length; i++) {
        random.nextBytes(block);
        digest.update(block);
        out.write(block);
      }
    }
    String sha = HexFormat.of().formatHex(digest.digest());
    String key = "resume/" + System.nanoTime() + "/model.bin";
    try (S3Client s3 = S3Client.builder()
        .region(Region.US_EAST_1)
        .endpointOverride(URI.create(endpoint))
        .forcePathStyle(true)
        .serviceConfiguration(
            S3Configuration.builder().chunkedEncodingEnabled(false).build())
        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
            ObjectStoreEmulators.S3_ACCESS_KEY, ObjectStoreEmulators.S3_SECRET)))
        .build()) {
      s3.putObject(r -> r.bucket("engram-bench").key(key), RequestBody.fromFile(object));
    } finally {
      Files.delete(object);
    }

    String nano;
    String location;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      Http http = server.http();
      String org = http.post("/v1/organizations")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"name\":\"Resume\",\"plan\":\"scale\"}")
          .send()
          .json()
          .get("id")
          .asText();
      nano = http.get("/v1/organizations/" + org + "/instances")
          .bearer(TestServer.ADMIN_KEY)
          .send()
          .json()
          .at("/data/0/id")
          .asText();
      Http.Response connected = http.post("/v1/nano/" + nano + "/storage/s3")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"bucket\":\"engram-bench\",\"region\":\"us-east-1\",\"access_key_id\":\""
              + ObjectStoreEmulators.S3_ACCESS_KEY + "\",\"secret_access_key\":\""
              + ObjectStoreEmulators.S3_SECRET + "\"}")
          .send();
      assertThat(connected.status()).as(connected.text()).isEqualTo(201);
      Http.Response accepted = http.post("/v1/nano/" + nano + "/storage/import")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"source\":\"s3://engram-bench/" + key + "\","
              + "\"destination\":\"training_data/model.bin\"}")
          .send();
      assertThat(accepted.status()).as(accepted.text()).isEqualTo(202);
      location = accepted.header("Location");
      // Cut once a few marks are on disk, well before the end.
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      JsonNode job;
      do {
        job = http.get(location).bearer(TestServer.ADMIN_KEY).send().json();
        assertThat(job.get("status").asText()).as(job.toString()).isIn("queued", "running");
        assertThat(System.nanoTime()).isLessThan(deadline);
      } while (job.at("/progress/bytes_done").asLong() < 24L * 1024 * 1024);
      server.kill9();
      assertThat(job.at("/progress/bytes_done").asLong()).isLessThan(SIZE);
    }

    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      Http http = server.http();
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      JsonNode job;
      do {
        Thread.sleep(100);
        job = http.get(location).bearer(TestServer.ADMIN_KEY).send().json();
        assertThat(System.nanoTime()).as(job.toString()).isLessThan(deadline);
      } while (!job.get("status").asText().equals("succeeded")
          && !job.get("status").asText().equals("failed"));
      assertThat(job.get("status").asText()).as(job.toString()).isEqualTo("succeeded");
      assertThat(job.get("attempts").asInt()).isEqualTo(2);
      assertThat(job.at("/progress/bytes_done").asLong()).isEqualTo(SIZE);
      Http.Response head = http.method(
              "HEAD", "/v1/nano/" + nano + "/storage/files/training_data/model.bin")
          .bearer(TestServer.ADMIN_KEY)
          .send();
      assertThat(head.header("ETag")).isEqualTo('"' + sha + '"');
      String log = server.stdout();
      assertThat(log).containsPattern("resumes " + key + " at byte [1-9][0-9]* of " + SIZE);
      // Nothing of the cut download is left behind.
      assertThat(dataDir
              .resolve("instances")
              .resolve(nano)
              .resolve("jobs")
              .resolve(job.get("id").asText()))
          .doesNotExist();
    }
  }
}
