package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.BesideTheRest;
import io.engram.support.Http;
import io.engram.support.ObjectStoreEmulators;
import io.engram.support.TestServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * External object stores through the official SDKs against local emulators (s3rver, Azurite):
 * connecting checks the credentials by a real call and never shows the secret again; exports and
 * imports run as jobs whose bytes arrive whole (checksums compared); retention exports before it
 * deletes, and a failed export keeps the item and raises the retention-violation alert.
 */
@BesideTheRest
class ObjectStoresTest {
  private static TestServer server;
  private static S3Client s3;

  @BeforeAll
  static void start() {
    server = TestServer.builder()
        .env("ENGRAM_S3_ENDPOINT", ObjectStoreEmulators.s3())
        .env("ENGRAM_AZURE_BLOB_ENDPOINT", ObjectStoreEmulators.azure())
        .start();
    s3 = S3Client.builder()
        .region(Region.US_EAST_1)
        .endpointOverride(URI.create(ObjectStoreEmulators.s3()))
        .forcePathStyle(true)
        .serviceConfiguration(software.amazon.awssdk.services.s3.S3Configuration.builder()
            .chunkedEncodingEnabled(false)
            .build())
        .requestChecksumCalculation(
            software.amazon.awssdk.core.checksums.RequestChecksumCalculation.WHEN_REQUIRED)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
            ObjectStoreEmulators.S3_ACCESS_KEY, ObjectStoreEmulators.S3_SECRET)))
        .build();
  }

  @AfterAll
  static void stop() {
    server.close();
    s3.close();
  }

  private record Org(String id, String nano, String admin) {}

  private static Org org(String plan) {
    String id = server.createOrganization(plan);
    String nano = server
        .asOperator(server.http.get("/v1/organizations/" + id + "/instances"))
        .json()
        .at("/data/0/id")
        .asText();
    return new Org(id, nano, server.apiKey(id, 100_000, "admin"));
  }

  private static Http.Response post(Org org, String route, String json) {
    return server
        .http
        .post("/v1/nano/" + org.nano() + route)
        .bearer(org.admin())
        .json(json)
        .send();
  }

  private static Http.Response connectS3(Org org, String bucket, String keyId) {
    return post(
        org,
        "/storage/s3",
        "{\"bucket\":\"" + bucket + "\",\"region\":\"us-east-1\","
            + "\"access_key_id\":\"" + keyId + "\","
            + "\"secret_access_key\":\"" + ObjectStoreEmulators.S3_SECRET + "\"}");
  }

  private static Http.Response connectAzure(Org org, String container, String key) {
    return post(
        org,
        "/storage/azure",
        "{\"account_name\":\"" + ObjectStoreEmulators.AZURE_ACCOUNT + "\",\"container\":\""
            + container + "\",\"access_key\":\"" + key + "\"}");
  }

  private static void put(Org org, String path, byte[] bytes) {
    Http.Response put = server
        .http
        .method("PUT", "/v1/nano/" + org.nano() + "/storage/files/" + path)
        .bearer(org.admin())
        .bytes("application/octet-stream", bytes)
        .send();
    assertThat(put.status()).as(put.text()).isIn(200, 201);
  }

  private static Http.Response get(Org org, String path) {
    return server
        .http
        .get("/v1/nano/" + org.nano() + "/storage/files/" + path)
        .bearer(org.admin())
        .send();
  }

  private static byte[] random(int size, long seed) {
    byte[] bytes = new byte[size];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  @Test
  void aConnectionIsCheckedByARealCallAndItsSecretNeverShown() {
    Org org = org("scale");
    // s3rver checks the access key id (not SigV4 signatures); Azurite below checks its key.
    Http.Response wrong = connectS3(org, "engram-test", "AKIANOTAKEY");
    assertThat(wrong.status()).as(wrong.text()).isEqualTo(400);
    assertThat(wrong.json().at("/error/code").asText()).isEqualTo("object_store_denied");
    Http.Response missing = connectS3(org, "no-such-bucket", ObjectStoreEmulators.S3_ACCESS_KEY);
    assertThat(missing.status()).as(missing.text()).isEqualTo(400);
    assertThat(missing.json().at("/error/code").asText()).isEqualTo("object_store_not_found");
    assertThat(missing.json().at("/error/param").asText()).isEqualTo("bucket");

    Http.Response ok = connectS3(org, "engram-test", ObjectStoreEmulators.S3_ACCESS_KEY);
    assertThat(ok.status()).as(ok.text()).isEqualTo(201);
    assertThat(ok.json().get("uri").asText()).isEqualTo("s3://engram-test/");
    assertThat(ok.text()).doesNotContain("S3RVER\"").doesNotContain("secret_access_key");
    assertThat(connectS3(org, "engram-test", ObjectStoreEmulators.S3_ACCESS_KEY).status())
        .isEqualTo(200);
    JsonNode stores = server
        .http
        .get("/v1/nano/" + org.nano() + "/storage/stores")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(stores.get("data")).hasSize(1);
    assertThat(stores.toString()).doesNotContain("secret");

    Http.Response azureWrong = connectAzure(org, "engram", "d3Jvbmcta2V5LXdyb25nLWtleQ==");
    assertThat(azureWrong.status()).as(azureWrong.text()).isEqualTo(400);
    assertThat(azureWrong.json().at("/error/code").asText()).isEqualTo("object_store_denied");

    // Bad fields are named, before any call.
    String[][] bad = {
      {
        "/storage/s3",
        "{\"bucket\":\"Bad_Bucket\",\"region\":\"us-east-1\",\"access_key_id\":\"abc\","
            + "\"secret_access_key\":\"x\"}",
        "bucket"
      },
      {
        "/storage/s3",
        "{\"bucket\":\"engram-test\",\"region\":\"mars\",\"access_key_id\":\"abc\","
            + "\"secret_access_key\":\"x\"}",
        "region"
      },
      {"/storage/s3", "{\"bucket\":\"engram-test\",\"region\":\"us-east-1\"}", "access_key_id"},
      {
        "/storage/gcs",
        "{\"bucket\":\"b-1\",\"project_id\":\"my-project\",\"credentials\":\"!!\"}",
        "credentials"
      },
      {
        "/storage/gcs",
        "{\"bucket\":\"b-1\",\"project_id\":\"my-project\",\"credentials\":\"e30=\"}",
        "credentials"
      },
      {
        "/storage/azure",
        "{\"account_name\":\"UPPER\",\"container\":\"c1\",\"access_key\":\"a2V5a2V5\"}",
        "account_name"
      },
      {
        "/storage/azure",
        "{\"account_name\":\"acct\",\"container\":\"a--b\",\"access_key\":\"a2V5a2V5\"}",
        "container"
      }
    };
    for (String[] c : bad) {
      Http.Response refused = post(org, c[0], c[1]);
      assertThat(refused.status()).as(c[1] + refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(refused.text()).isEqualTo(c[2]);
    }

    // A member key may not connect stores; another organization's instance is a 404.
    String member = server.apiKey(org.id(), 1000, "inference");
    assertThat(server
            .http
            .post("/v1/nano/" + org.nano() + "/storage/s3")
            .bearer(member)
            .json("{}")
            .send()
            .status())
        .isEqualTo(403);
    Org stranger = org("scale");
    assertThat(server
            .http
            .get("/v1/nano/" + org.nano() + "/storage/stores")
            .bearer(stranger.admin())
            .send()
            .status())
        .isEqualTo(404);
    String id = stores.at("/data/0/id").asText();
    assertThat(server
            .http
            .delete("/v1/nano/" + org.nano() + "/storage/stores/" + id)
            .bearer(org.admin())
            .send()
            .status())
        .isEqualTo(204);
    Http.Response unconnected = post(
        org, "/storage/export", "{\"source\":\"data/\",\"destination\":\"s3://engram-test/x/\"}");
    assertThat(unconnected.status()).as(unconnected.text()).isEqualTo(400);
    assertThat(unconnected.json().at("/error/code").asText())
        .isEqualTo("object_store_not_configured");
  }

  @Test
  void exportsAndImportsCarryEveryByteBothWays() throws Exception {
    Org org = org("scale");
    assertThat(connectS3(org, "engram-test", ObjectStoreEmulators.S3_ACCESS_KEY).status())
        .isEqualTo(201);
    byte[] big = random(12 * 1024 * 1024 + 7, 1);
    byte[] small = "{\"small\":true}".getBytes(StandardCharsets.UTF_8);
    put(org, "results/run-1/model.bin", big);
    put(org, "results/run-1/meta/info.json", small);

    String prefix = "exports/" + org.nano() + "/";
    JsonNode exported = Jobs.succeeded(
        server,
        org.admin(),
        post(
            org,
            "/storage/export",
            "{\"source\":\"results/run-1/\",\"destination\":\"s3://engram-test/" + prefix + "\"}"));
    assertThat(exported.at("/progress/files_done").asInt()).isEqualTo(2);
    assertThat(exported.at("/progress/bytes_done").asLong()).isEqualTo(big.length + small.length);
    assertThat(exported.at("/progress/percent").asDouble()).isEqualTo(100.0);
    assertThat(s3.getObjectAsBytes(r -> r.bucket("engram-test").key(prefix + "model.bin"))
            .asByteArray())
        .isEqualTo(big);
    assertThat(s3.headObject(r -> r.bucket("engram-test").key(prefix + "meta/info.json"))
            .metadata()
            .get("sha256"))
        .isEqualTo(sha256(small));

    // Back in, under another folder: the same bytes, the same checksum.
    Jobs.succeeded(
        server,
        org.admin(),
        post(
            org,
            "/storage/import",
            "{\"source\":\"s3://engram-test/" + prefix + "\",\"destination\":\"data/restored/\"}"));
    Http.Response back = get(org, "data/restored/model.bin");
    assertThat(back.header("ETag")).isEqualTo('"' + sha256(big) + '"');
    assertThat(get(org, "data/restored/meta/info.json").text())
        .isEqualTo(new String(small, StandardCharsets.UTF_8));

    // An object someone else wrote (no checksum of ours) comes in by its size; one object into
    // a folder keeps its name.
    byte[] foreign = random(3 * 1024 * 1024, 2);
    s3.putObject(
        r -> r.bucket("engram-test").key("incoming/" + org.nano() + "/raw.csv"),
        RequestBody.fromBytes(foreign));
    Jobs.succeeded(
        server,
        org.admin(),
        post(
            org,
            "/storage/import",
            "{\"source\":\"s3://engram-test/incoming/" + org.nano() + "/raw.csv\","
                + "\"destination\":\"data/in/\"}"));
    assertThat(get(org, "data/in/raw.csv").header("ETag")).isEqualTo('"' + sha256(foreign) + '"');

    // An object whose bytes do not match the checksum it carries is refused, and not kept.
    String wrongSum = sha256(small);
    s3.putObject(
        r -> r.bucket("engram-test")
            .key("incoming/" + org.nano() + "/tampered.bin")
            .metadata(java.util.Map.of("sha256", wrongSum)),
        RequestBody.fromBytes(foreign));
    JsonNode tampered = Jobs.await(
        server,
        org.admin(),
        post(
            org,
            "/storage/import",
            "{\"source\":\"s3://engram-test/incoming/" + org.nano() + "/tampered.bin\","
                + "\"destination\":\"data/tampered.bin\"}"));
    assertThat(tampered.get("status").asText()).isEqualTo("failed");
    assertThat(tampered.at("/error/code").asText()).isEqualTo("checksum_mismatch");
    assertThat(get(org, "data/tampered.bin").status()).isEqualTo(404);

    // Bad requests are refused before a job exists.
    String[][] refused = {
      {
        "/storage/import",
        "{\"source\":\"s3://engram-test/nothing-here/\",\"destination\":\"data/x/\"}",
        "404"
      },
      {"/storage/import", "{\"source\":\"ftp://engram-test/a\",\"destination\":\"data/x\"}", "400"},
      {
        "/storage/import",
        "{\"source\":\"s3://engram-test/a/../b\",\"destination\":\"data/x\"}",
        "400"
      },
      {
        "/storage/import",
        "{\"source\":\"s3://engram-test/" + prefix + "\",\"destination\":\"data/x\"}",
        "400"
      },
      {
        "/storage/import",
        "{\"source\":\"s3://engram-test/" + prefix + "model.bin\","
            + "\"destination\":\"conversation_history/x\"}",
        "403"
      },
      {
        "/storage/export",
        "{\"source\":\"results/none.bin\",\"destination\":\"s3://engram-test/a\"}",
        "404"
      },
      {
        "/storage/export",
        "{\"source\":\"results/run-1/\",\"destination\":\"s3://engram-test/a\"}",
        "400"
      },
      {"/storage/export", "{\"source\":\"results/run-1/model.bin\"}", "400"}
    };
    for (String[] c : refused) {
      Http.Response answer = post(org, c[0], c[1]);
      assertThat(answer.status()).as(c[1] + " " + answer.text()).isEqualTo(Integer.parseInt(c[2]));
    }
    JsonNode jobs = server
        .http
        .get("/v1/nano/" + org.nano() + "/storage/jobs")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(jobs.get("data")).hasSize(4);
    String finished = jobs.at("/data/0/id").asText();
    Http.Response cancel = server
        .http
        .post("/v1/nano/" + org.nano() + "/storage/jobs/" + finished + "/cancel")
        .bearer(org.admin())
        .send();
    assertThat(cancel.status()).isEqualTo(409);
  }

  @Test
  void anImportThatWouldPassTheAllowanceIsRefusedBeforeAnyByte() throws Exception {
    Org org = org("free"); // 1 GB
    assertThat(
            connectS3(org, "engram-bench", ObjectStoreEmulators.S3_ACCESS_KEY).status())
        .isEqualTo(201);
    // An object past the allowance (a sparse local file: cheap to make, real bytes to the store).
    java.nio.file.Path sparse = java.nio.file.Files.createTempFile("engram-big", ".bin");
    try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(sparse.toFile(), "rw")) {
      file.setLength(1_000_000_001L);
    }
    String key = "limit/" + org.nano() + "/huge.bin";
    try {
      s3.putObject(r -> r.bucket("engram-bench").key(key), RequestBody.fromFile(sparse));
    } finally {
      java.nio.file.Files.delete(sparse);
    }
    Http.Response refused = post(
        org,
        "/storage/import",
        "{\"source\":\"s3://engram-bench/" + key + "\",\"destination\":\"data/huge.bin\"}");
    assertThat(refused.status()).as(refused.text()).isEqualTo(403);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("storage_limit_exceeded");
    assertThat(server
            .http
            .get("/v1/nano/" + org.nano() + "/storage/jobs")
            .bearer(org.admin())
            .send()
            .json()
            .get("data"))
        .isEmpty();
    s3.deleteObject(r -> r.bucket("engram-bench").key(key));
  }

  @Test
  void azureCarriesFilesBothWays() throws Exception {
    Org org = org("scale");
    com.azure.storage.blob.BlobServiceClient azure =
        new com.azure.storage.blob.BlobServiceClientBuilder()
            .endpoint(ObjectStoreEmulators.azure()
                .replace("{account}", ObjectStoreEmulators.AZURE_ACCOUNT))
            .credential(new com.azure.storage.common.StorageSharedKeyCredential(
                ObjectStoreEmulators.AZURE_ACCOUNT, ObjectStoreEmulators.AZURE_KEY))
            .buildClient();
    String container = "c-" + org.nano().substring(org.nano().length() - 8);
    azure.createBlobContainer(container);
    Http.Response connected = connectAzure(org, container, ObjectStoreEmulators.AZURE_KEY);
    assertThat(connected.status()).as(connected.text()).isEqualTo(201);
    byte[] bytes = random(5 * 1024 * 1024 + 3, 4);
    put(org, "data/report.bin", bytes);
    Jobs.succeeded(
        server,
        org.admin(),
        post(
            org,
            "/storage/export",
            "{\"source\":\"data/report.bin\",\"destination\":\"azure://" + container + "/out/\"}"));
    assertThat(azure
            .getBlobContainerClient(container)
            .getBlobClient("out/report.bin")
            .downloadContent()
            .toBytes())
        .isEqualTo(bytes);
    Jobs.succeeded(
        server,
        org.admin(),
        post(
            org,
            "/storage/import",
            "{\"source\":\"azure://" + container
                + "/out/report.bin\",\"destination\":\"data/back.bin\"}"));
    assertThat(get(org, "data/back.bin").header("ETag")).isEqualTo('"' + sha256(bytes) + '"');
  }

  @Test
  void retentionExportsBeforeItDeletesAndAFailedExportKeepsTheItem() throws Exception {
    Org org = org("scale");
    String retention = "/v1/organizations/" + org.id() + "/retention";
    String policy = "{\"policies\":[{\"type\":\"results\",\"keep_latest\":1,"
        + "\"export_before_delete\":true,"
        + "\"export_destination\":\"s3://engram-retention/" + org.nano() + "/\"}]}";
    Http.Response notConnected = server.asOperator(server.http.post(retention).json(policy));
    assertThat(notConnected.status()).as(notConnected.text()).isEqualTo(400);
    assertThat(notConnected.json().at("/error/code").asText())
        .isEqualTo("object_store_not_configured");
    assertThat(notConnected.json().at("/error/param").asText())
        .isEqualTo("policies[0].export_destination");

    Http.Response connected =
        connectS3(org, "engram-retention", ObjectStoreEmulators.S3_ACCESS_KEY);
    assertThat(connected.status()).isEqualTo(201);
    assertThat(server.asOperator(server.http.post(retention).json(policy)).status())
        .isEqualTo(200);
    put(org, "results/a-old.json", "{\"old\":1}".getBytes(StandardCharsets.UTF_8));
    Thread.sleep(5);
    put(org, "results/b-new.json", "{\"new\":1}".getBytes(StandardCharsets.UTF_8));

    JsonNode dry = server
        .asOperator(server.http.post(retention + "/run").json("{\"dry_run\":true}"))
        .json();
    assertThat(dry.at("/deleted/0/item").asText()).isEqualTo("results/a-old.json");
    assertThat(dry.at("/exported/0/reason").asText())
        .isEqualTo("s3://engram-retention/" + org.nano() + "/");
    assertThat(get(org, "results/a-old.json").status()).isEqualTo(200);

    JsonNode run = server.asOperator(server.http.post(retention + "/run")).json();
    assertThat(run.get("deleted")).hasSize(1);
    assertThat(run.get("kept")).isEmpty();
    assertThat(get(org, "results/a-old.json").status()).isEqualTo(404);
    assertThat(s3.getObjectAsBytes(r -> r.bucket("engram-retention")
                .key(org.nano() + "/" + org.nano() + "/results/a-old.json"))
            .asUtf8String())
        .isEqualTo("{\"old\":1}");

    // The store goes away: the next item is kept, and the violation alert fires.
    String store = connected.json().get("id").asText();
    server
        .http
        .delete("/v1/nano/" + org.nano() + "/storage/stores/" + store)
        .bearer(org.admin())
        .send();
    Thread.sleep(5);
    put(org, "results/c-newest.json", "{\"newest\":1}".getBytes(StandardCharsets.UTF_8));
    JsonNode failed = server.asOperator(server.http.post(retention + "/run")).json();
    assertThat(failed.get("deleted")).isEmpty();
    assertThat(failed.at("/kept/0/item").asText()).isEqualTo("results/b-new.json");
    assertThat(failed.at("/kept/0/failure").asText()).contains("not connected");
    assertThat(get(org, "results/b-new.json").status()).isEqualTo(200);
    assertThat(org.nano()).isNotNull();
    try {
      s3.headObject(r ->
          r.bucket("engram-retention").key(org.nano() + "/" + org.nano() + "/results/b-new.json"));
      throw new AssertionError("the kept item was exported");
    } catch (NoSuchKeyException expected) {
      // nothing was written
    } catch (software.amazon.awssdk.services.s3.model.S3Exception expected) {
      assertThat(expected.statusCode()).isEqualTo(404);
    }
    JsonNode alerts = server
        .asOperator(server.http.get("/v1/organizations/" + org.id() + "/alerts?state=firing"))
        .json();
    assertThat(alerts.toString()).contains("retention_violation");
  }
}
