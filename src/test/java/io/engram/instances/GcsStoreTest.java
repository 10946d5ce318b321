package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeGcs;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Cloud Storage through Google's own client, over HTTP, against {@link FakeGcs}: a service
 * account whose key the token endpoint refuses is a 400 naming the credentials; a good one
 * connects, and files go out and come back whole, in one upload and in a resumable one.
 */
class GcsStoreTest {
  @Test
  void cloudStorageCarriesFilesBothWays() throws Exception {
    try (FakeGcs gcs = new FakeGcs(Set.of("engram-gcs"));
        TestServer server =
            TestServer.builder().env("ENGRAM_GCS_ENDPOINT", gcs.endpoint()).start()) {
      String org = server.createOrganization("scale");
      String nano = server
          .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
          .json()
          .at("/data/0/id")
          .asText();
      String route = "/v1/nano/" + nano + "/storage/gcs";
      Http.Response refused = server.asOperator(server
          .http
          .post(route)
          .json("{\"bucket\":\"engram-gcs\",\"project_id\":\"engram-test\",\"credentials\":\""
              + gcs.strangerCredentials("someone@engram-test.iam.gserviceaccount.com") + "\"}"));
      assertThat(refused.status()).as(refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo("credentials");
      Http.Response missing = server.asOperator(server
          .http
          .post(route)
          .json("{\"bucket\":\"no-such-bucket\",\"project_id\":\"engram-test\",\"credentials\":\""
              + gcs.credentials("engram@engram-test.iam.gserviceaccount.com") + "\"}"));
      assertThat(missing.status()).as(missing.text()).isEqualTo(400);
      assertThat(missing.json().at("/error/code").asText()).isEqualTo("object_store_not_found");
      Http.Response connected = server.asOperator(server
          .http
          .post(route)
          .json("{\"bucket\":\"engram-gcs\",\"project_id\":\"engram-test\",\"credentials\":\""
              + gcs.credentials("engram@engram-test.iam.gserviceaccount.com") + "\"}"));
      assertThat(connected.status()).as(connected.text()).isEqualTo(201);
      assertThat(connected.json().get("client_email").asText())
          .isEqualTo("engram@engram-test.iam.gserviceaccount.com");
      assertThat(connected.text()).doesNotContain("PRIVATE KEY");

      byte[] bytes = new byte[3 * 1024 * 1024 + 11];
      new Random(5).nextBytes(bytes);
      String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
      assertThat(server
              .asOperator(server
                  .http
                  .method("PUT", "/v1/nano/" + nano + "/storage/files/results/eval.bin")
                  .bytes("application/octet-stream", bytes))
              .status())
          .isEqualTo(201);
      Jobs.succeeded(
          server,
          TestServer.ADMIN_KEY,
          server.asOperator(server
              .http
              .post("/v1/nano/" + nano + "/storage/export")
              .json("{\"source\":\"results/\",\"destination\":\"gs://engram-gcs/out/\"}")));
      assertThat(gcs.object("engram-gcs", "out/eval.bin")).isEqualTo(bytes);
      JsonNode back = Jobs.succeeded(
          server,
          TestServer.ADMIN_KEY,
          server.asOperator(
              server
                  .http
                  .post("/v1/nano/" + nano + "/storage/import")
                  .json(
                      "{\"source\":\"gs://engram-gcs/out/eval.bin\",\"destination\":\"data/eval.bin\"}")));
      assertThat(back.at("/progress/bytes_done").asLong()).isEqualTo(bytes.length);
      assertThat(server
              .asOperator(server.http.get("/v1/nano/" + nano + "/storage/files/data/eval.bin"))
              .header("ETag"))
          .isEqualTo('"' + sha + '"');
    }
  }
}
