package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.store.SqliteDatabase;
import io.engram.support.BesideTheRest;
import io.engram.support.Http;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory index is derived from the database: a killed server loses no acknowledged memory, and
 * on start the index catches up from the change log, or is rebuilt when it is missing.
 */
@BesideTheRest
class MemoryDurabilityTest {
  @TempDir
  Path dataDir;

  Map<String, String> env() {
    return Map.of(
        "ENGRAM_DATA_DIR",
        dataDir.toString(),
        "ENGRAM_ADMIN_KEY",
        TestServer.ADMIN_KEY,
        "RATE_LIMIT_REQUESTS",
        "1000000",
        "LOG_FILE_PATH",
        dataDir.resolve("app.log").toString());
  }

  ServerProcess start() {
    return ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(90));
  }

  static String token(Http http) {
    String org = http.post("/v1/organizations")
        .bearer(TestServer.ADMIN_KEY)
        .json("{\"name\":\"Durable memory\",\"plan\":\"growth\"}")
        .send()
        .json()
        .get("id")
        .asText();
    return http.post("/v1/organizations/" + org + "/tokens")
        .bearer(TestServer.ADMIN_KEY)
        .json("{\"name\":\"w\",\"scopes\":[\"memory:read\",\"memory:write\"]}")
        .send()
        .json()
        .get("token")
        .asText();
  }

  /** A word no other memory contains, so BM25 finds exactly its memory. */
  static String marker() {
    return "probe" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  static void assertRetrievable(Http http, String token, String id, String marker) {
    Http.Response found = http.post("/v1/memory/retrieve")
        .bearer(token)
        .json("{\"query\":\"" + marker + "\",\"limit\":3,\"recordUse\":false}")
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    assertThat(found.json().get("memories").findValuesAsText("id")).as(marker).contains(id);
  }

  @Test
  void noAcknowledgedMemoryIsLostToKillDashNine() throws Exception {
    Map<String, String> acknowledged = new ConcurrentHashMap<>();
    String token;
    try (ServerProcess server = start()) {
      Http http = server.http();
      token = token(http);
      AtomicBoolean stop = new AtomicBoolean();
      try (ExecutorService writers = Executors.newVirtualThreadPerTaskExecutor()) {
        for (int w = 0; w < 8; w++) {
          writers.submit(() -> {
            while (!stop.get()) {
              String marker = marker();
              try {
                Http.Response response = http.post("/v1/memory")
                    .bearer(token)
                    .json("{\"text\":\"Durability check " + marker
                        + " for the nightly job\",\"subject\":\"ops\"}")
                    .send();
                if (response.status() == 201) {
                  acknowledged.put(response.json().get("id").asText(), marker);
                }
              } catch (RuntimeException connectionLost) {
                return;
              }
            }
          });
        }
        while (acknowledged.size() < 200) {
          Thread.sleep(20);
        }
        server.kill9();
        stop.set(true);
      }
    }
    assertThat(acknowledged).hasSizeGreaterThanOrEqualTo(200);
    try (ServerProcess restarted = start()) {
      Http http = restarted.http();
      acknowledged.forEach((id, marker) -> {
        Http.Response stored = http.get("/v1/memory/" + id).bearer(token).send();
        assertThat(stored.status()).as(id).isEqualTo(200);
        assertThat(stored.json().get("state").asText()).isEqualTo("durable");
        assertRetrievable(http, token, id, marker);
      });
    }
  }

  @Test
  void theIndexIsRebuiltWhenMissingAndCatchesUpWhenStale() throws IOException {
    String token;
    String kept;
    String keptMarker = marker();
    String suppressed;
    String suppressedMarker = marker();
    try (ServerProcess server = start()) {
      Http http = server.http();
      token = token(http);
      kept = http.post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"Kept " + keptMarker + "\"}")
          .send()
          .json()
          .get("id")
          .asText();
      suppressed = http.post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"Changed " + suppressedMarker + "\"}")
          .send()
          .json()
          .get("id")
          .asText();
      assertThat(server.terminate()).isIn(0, 143);
    }
    // Another node (here: a direct write) suppresses a memory while this one is down.
    try (SqliteDatabase database = new SqliteDatabase(dataDir.resolve("engram.db"))) {
      database.write(h -> {
        h.createUpdate("UPDATE memories SET state = 'suppressed' WHERE id = :id")
            .bind("id", suppressed)
            .execute();
        return h.createUpdate(
                "INSERT INTO memory_changes (memory_id, changed_at) VALUES (:id, :at)")
            .bind("id", suppressed)
            .bind("at", System.currentTimeMillis())
            .execute();
      });
    }
    try (ServerProcess caughtUp = start()) {
      Http http = caughtUp.http();
      assertRetrievable(http, token, kept, keptMarker);
      Http.Response gone = http.post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"" + suppressedMarker + "\"}")
          .send();
      assertThat(gone.json().get("memories").findValuesAsText("id")).doesNotContain(suppressed);
      assertThat(caughtUp.terminate()).isIn(0, 143);
      assertThat(logLines(caughtUp))
          .anySatisfy(line -> assertThat(line).contains("memory index opened"));
    }
    try (Stream<Path> files = Files.walk(dataDir.resolve("index"))) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    }
    try (ServerProcess rebuilt = start()) {
      assertRetrievable(rebuilt.http(), token, kept, keptMarker);
      assertThat(rebuilt.terminate()).isIn(0, 143);
      assertThat(logLines(rebuilt))
          .anySatisfy(
              line -> assertThat(line).contains("memory index rebuilt").contains("(missing)"));
    }
  }

  static java.util.List<String> logLines(ServerProcess server) {
    return server
        .stdout()
        .lines()
        .map(line -> Json.read(line, JsonNode.class).get("message").asText())
        .toList();
  }
}
