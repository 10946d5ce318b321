package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ObjectStoreEmulators;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Two nodes sharing PostgreSQL and a storage directory: one default instance however many nodes
 * ask for it at once, a file written through one node read through the other, and an instance's
 * restart on one node in force on the other within seconds.
 */
class PostgresInstancesAcrossNodesTest {

  @Test
  void instancesAndTheirFilesAreTheSameOnEveryNode() throws Exception {
    Path storage = Files.createTempDirectory("engram-storage");
    try (TestServer first = TestServer.builder()
            .postgres()
            .env("ENGRAM_STORAGE_DIR", storage.toString())
            .env("ENGRAM_S3_ENDPOINT", ObjectStoreEmulators.s3())
            .start();
        TestServer second = TestServer.builder()
            .sharing(first)
            .env("ENGRAM_STORAGE_DIR", storage.toString())
            .env("ENGRAM_S3_ENDPOINT", ObjectStoreEmulators.s3())
            .start()) {
      String org = first.createOrganization("seed");
      // Both nodes make the default at once: one wins, both see it.
      List<CompletableFuture<Http.Response>> lists = new ArrayList<>();
      for (TestServer node : List.of(first, second, first, second)) {
        lists.add(CompletableFuture.supplyAsync(
            () -> node.asOperator(node.http.get("/v1/organizations/" + org + "/instances"))));
      }
      List<String> ids = new ArrayList<>();
      for (CompletableFuture<Http.Response> list : lists) {
        JsonNode data = list.get().json().get("data");
        assertThat(data).hasSize(1);
        ids.add(data.get(0).get("id").asText());
      }
      assertThat(ids).containsOnly(ids.get(0));
      String nano = ids.get(0);

      byte[] bytes = "{\"messages\":[]}\n".getBytes(StandardCharsets.UTF_8);
      Http.Response put = first.asOperator(first
          .http
          .method("PUT", "/v1/nano/" + nano + "/storage/files/training_data/chat.jsonl")
          .bytes("text/plain", bytes));
      assertThat(put.status()).as(put.text()).isEqualTo(201);
      Http.Response read = second.asOperator(
          second.http.get("/v1/nano/" + nano + "/storage/files/training_data/chat.jsonl"));
      assertThat(read.status()).isEqualTo(200);
      assertThat(read.text()).isEqualTo(new String(bytes, StandardCharsets.UTF_8));
      assertThat(read.header("ETag")).isEqualTo(put.header("ETag"));
      assertThat(second
              .asOperator(second.http.get("/v1/organizations/" + org + "/storage"))
              .json()
              .get("training_data_gb")
              .decimalValue()
              .signum())
          .isPositive();

      String token = first.token(org, null, "memory:write", "memory:read", "memory:delete");
      Http.Response memory = first
          .http
          .post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"Acme renews its contract in March\"}")
          .send();
      assertThat(memory.status()).as(memory.text()).isEqualTo(201);
      String acme = memory.json().get("id").asText();

      // A snapshot on one node (repeatable read on PostgreSQL), restored through the other.
      Http.Response snapshot = first.asOperator(
          first.http.post("/v1/nano/" + nano + "/snapshot").json("{\"description\":\"pg\"}"));
      assertThat(snapshot.status()).as(snapshot.text()).isEqualTo(201);
      assertThat(snapshot.json().get("status").asText()).isEqualTo("complete");
      Http.Response restored = second.asOperator(second
          .http
          .post("/v1/nano/" + nano + "/restore")
          .json("{\"snapshot_id\":\"" + snapshot.json().get("id").asText()
              + "\",\"restore_path\":\"data/restored/\"}"));
      assertThat(restored.status()).as(restored.text()).isEqualTo(200);
      assertThat(second
              .asOperator(second.http.get(
                  "/v1/nano/" + nano + "/storage/files/data/restored/training_data/chat.jsonl"))
              .text())
          .isEqualTo(new String(bytes, StandardCharsets.UTF_8));

      // Over live data through the second node: the rows go back (PostgreSQL's types), and the
      // first node's index follows the change log.
      assertThat(first.http.delete("/v1/memory/" + acme).bearer(token).send().status())
          .isEqualTo(200);
      Http.Response overLive = second.asOperator(second
          .http
          .post("/v1/nano/" + nano + "/restore")
          .json("{\"snapshot_id\":\"" + snapshot.json().get("id").asText()
              + "\",\"restore_path\":\"/\"}"));
      assertThat(overLive.status()).as(overLive.text()).isEqualTo(200);
      assertThat(first
              .http
              .get("/v1/memory/" + acme)
              .bearer(token)
              .send()
              .json()
              .get("state")
              .asText())
          .isEqualTo("durable");
      long waited = System.nanoTime();
      while (!first
          .http
          .post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"When does Acme renew?\",\"limit\":3}")
          .send()
          .text()
          .contains(acme)) {
        assertThat(Duration.ofNanos(System.nanoTime() - waited))
            .as("the restored memory retrieved on the other node")
            .isLessThan(Duration.ofSeconds(10));
        Thread.sleep(100);
      }

      // A storage job asked of one node is run by exactly one of them, to the end.
      Http.Response copy = first.asOperator(first
          .http
          .post("/v1/nano/" + nano + "/storage/copy")
          .json("{\"source_path\":\"training_data/chat.jsonl\",\"destination_nano\":\"" + nano
              + "\",\"destination_path\":\"data/copied.jsonl\"}"));
      JsonNode job = Jobs.succeeded(second, TestServer.ADMIN_KEY, copy);
      assertThat(job.get("attempts").asInt()).isEqualTo(1);

      // A store connected through one node (its secret sealed with the shared key) serves an
      // export asked of the other.
      Http.Response connected = first.asOperator(first
          .http
          .post("/v1/nano/" + nano + "/storage/s3")
          .json("{\"bucket\":\"engram-test\",\"region\":\"us-east-1\",\"access_key_id\":\""
              + ObjectStoreEmulators.S3_ACCESS_KEY + "\",\"secret_access_key\":\""
              + ObjectStoreEmulators.S3_SECRET + "\"}"));
      assertThat(connected.status()).as(connected.text()).isEqualTo(201);
      Jobs.succeeded(
          second,
          TestServer.ADMIN_KEY,
          second.asOperator(second
              .http
              .post("/v1/nano/" + nano + "/storage/export")
              .json(
                  "{\"source\":\"training_data/chat.jsonl\",\"destination\":\"s3://engram-test/pg/"
                      + nano + "/\"}")));

      // Cached on the second node first, then changed by a restart on the first.
      assertThat(variable(second, org, "RATE_LIMIT_REQUESTS").get("source").asText())
          .isEqualTo("system");
      first.asOperator(first
          .http
          .post("/v1/nano/" + nano + "/env")
          .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"9\"}}"));
      assertThat(
              first.asOperator(first.http.post("/v1/nano/" + nano + "/restart")).status())
          .isEqualTo(200);
      long start = System.nanoTime();
      while (!variable(second, org, "RATE_LIMIT_REQUESTS").get("value").asText().equals("9")) {
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("the restart seen on the second node")
            .isLessThan(Duration.ofSeconds(5));
        Thread.sleep(50);
      }
      assertThat(variable(second, org, "RATE_LIMIT_REQUESTS").get("source").asText())
          .isEqualTo("instance");
    }
  }

  private static JsonNode variable(TestServer node, String org, String name) {
    for (JsonNode variable : node.asOperator(node.http.get("/v1/organizations/" + org + "/env"))
        .json()
        .get("data")) {
      if (variable.get("name").asText().equals(name)) {
        return variable;
      }
    }
    throw new AssertionError(name);
  }
}
