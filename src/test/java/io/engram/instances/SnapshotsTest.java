package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.MutableClock;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Snapshots and restore: a snapshot keeps the files and the organization's data with checksums;
 * a restore into a folder leaves the live files alone, one over them takes a safety snapshot
 * first (restoring it undoes the restore) and makes the files what they were, byte for byte;
 * automatic backups run on their interval, and one whose destination refuses raises the
 * backup_failed alert.
 */
class SnapshotsTest {

  private record Org(TestServer server, String id, String nano) {
    Http.Response op(Http.Call call) {
      return server.asOperator(call);
    }

    void put(String path, String text) {
      assertThat(op(server
                  .http
                  .method("PUT", "/v1/nano/" + nano + "/storage/files/" + path)
                  .body("text/plain", text))
              .status())
          .isIn(200, 201);
    }

    String read(String path) {
      Http.Response file = op(server.http.get("/v1/nano/" + nano + "/storage/files/" + path));
      return file.status() == 200 ? file.text() : null;
    }

    List<String> paths() {
      List<String> paths = new ArrayList<>();
      op(server.http.get("/v1/nano/" + nano + "/storage/files?limit=1000"))
          .json()
          .get("data")
          .forEach(file -> paths.add(file.get("path").asText()));
      return paths;
    }

    Http.Response restore(String snapshot, String path) {
      return op(server
          .http
          .post("/v1/nano/" + nano + "/restore")
          .json("{\"snapshot_id\":\"" + snapshot + "\",\"restore_path\":\"" + path + "\"}"));
    }
  }

  private static Org org(TestServer server) {
    String id = server.createOrganization("seed");
    String nano = server
        .asOperator(server.http.get("/v1/organizations/" + id + "/instances"))
        .json()
        .at("/data/0/id")
        .asText();
    return new Org(server, id, nano);
  }

  @Test
  void aSnapshotRestoresIntoAFolderOrOverTheLiveFilesAndCanBeUndone() throws Exception {
    try (TestServer server = TestServer.start()) {
      Org org = org(server);
      org.put("data/a.txt", "first a");
      org.put("results/b.json", "{\"b\":1}");
      String token = server.token(org.id(), null, "memory:write");
      assertThat(server
              .http
              .post("/v1/memory")
              .bearer(token)
              .json("{\"text\":\"Acme renews in March\"}")
              .send()
              .status())
          .isEqualTo(201);

      Http.Response taken = org.op(server
          .http
          .post("/v1/nano/" + org.nano() + "/snapshot")
          .json("{\"description\":\"before the change\",\"retention_days\":3}"));
      assertThat(taken.status()).as(taken.text()).isEqualTo(201);
      JsonNode snapshot = taken.json();
      assertThat(snapshot.get("status").asText()).isEqualTo("complete");
      assertThat(snapshot.get("files").asInt()).isEqualTo(2);
      assertThat(
              snapshot.get("expires_at").asLong() - snapshot.get("created_at").asLong())
          .isEqualTo(Duration.ofDays(3).toSeconds());
      assertThat(snapshot.get("retention_days").asInt()).isEqualTo(3);
      String id = snapshot.get("id").asText();
      JsonNode manifest = Json.read(
          Files.readString(
              server.dataDir().resolve("snapshots").resolve(id).resolve("manifest.json")),
          JsonNode.class);
      JsonNode memories = null;
      for (JsonNode table : manifest.get("tables")) {
        if (table.get("name").asText().equals("memories")) {
          memories = table;
        }
      }
      assertThat(memories).isNotNull();
      assertThat(memories.get("rows").asInt()).isEqualTo(1);

      // Changes after the snapshot.
      org.put("data/a.txt", "second a");
      assertThat(
              org.op(server.http.delete("/v1/nano/" + org.nano() + "/storage/files/results/b.json"))
                  .status())
          .isEqualTo(204);
      org.put("data/c.txt", "new c");

      Http.Response intoFolder = org.restore(id, "data/restored/");
      assertThat(intoFolder.status()).as(intoFolder.text()).isEqualTo(200);
      assertThat(intoFolder.json().get("files_written").asInt()).isEqualTo(2);
      assertThat(org.read("data/restored/data/a.txt")).isEqualTo("first a");
      assertThat(org.read("data/a.txt")).isEqualTo("second a");

      Http.Response overLive = org.restore(id, "/");
      assertThat(overLive.status()).as(overLive.text()).isEqualTo(200);
      String safety = overLive.json().get("safety_snapshot_id").asText();
      assertThat(org.read("data/a.txt")).isEqualTo("first a");
      assertThat(org.read("results/b.json")).isEqualTo("{\"b\":1}");
      assertThat(org.paths()).containsExactlyInAnyOrder("data/a.txt", "results/b.json");

      // The safety snapshot undoes it.
      assertThat(org.restore(safety, "/").status()).isEqualTo(200);
      assertThat(org.read("data/a.txt")).isEqualTo("second a");
      assertThat(org.read("data/c.txt")).isEqualTo("new c");
      assertThat(org.read("results/b.json")).isNull();
      JsonNode list =
          org.op(server.http.get("/v1/nano/" + org.nano() + "/snapshots")).json();
      assertThat(list.get("data").size()).isGreaterThanOrEqualTo(3);

      // Bad input, and another organization's snapshot.
      assertThat(org.restore("snap_nothing", "/").status()).isEqualTo(404);
      assertThat(org.restore(id, "data/no-slash").status()).isEqualTo(400);
      assertThat(org.restore(id, "conversation_history/x/").status()).isEqualTo(400);
      assertThat(org.op(server
                  .http
                  .post("/v1/nano/" + org.nano() + "/snapshot")
                  .json("{\"retention_days\":0}"))
              .status())
          .isEqualTo(400);
      Org other = org(server);
      assertThat(other.restore(id, "/").status()).isEqualTo(404);
      assertThat(other
              .op(server.http.get("/v1/nano/" + other.nano() + "/snapshots/" + id))
              .status())
          .isEqualTo(404);
    }
  }

  @Test
  void aRestoreOverLiveDataPutsTheOrganizationsRowsBackRowForRow() throws Exception {
    try (TestServer server = TestServer.start()) {
      Org org = org(server);
      String token = server.token(org.id(), null, "memory:write", "memory:read", "memory:delete");
      String admin = server.apiKey(org.id(), 1000, "admin");
      String acme = remember(server, token, "Acme renews its contract in March");
      String globex = remember(server, token, "Globex prefers to be contacted by email");
      Http.Response assistant = server
          .http
          .post("/api/assistants")
          .bearer(admin)
          .json("{\"name\":\"Front desk\",\"type\":\"org_shared\"}")
          .send();
      assertThat(assistant.status()).as(assistant.text()).isEqualTo(201);
      String desk = assistant.json().at("/assistant/_id").asText();
      JsonNode acmeBefore = memory(server, token, acme);
      JsonNode globexBefore = memory(server, token, globex);
      String taken = org.op(
              server.http.post("/v1/nano/" + org.nano() + "/snapshot").json("{}"))
          .json()
          .get("id")
          .asText();

      // After the snapshot: one memory deleted, one added, the assistant deleted, another made.
      assertThat(server.http.delete("/v1/memory/" + acme).bearer(token).send().status())
          .isIn(200, 204);
      String initech = remember(server, token, "Initech churned in the spring");
      assertThat(
              server.http.delete("/api/assistants/" + desk).bearer(admin).send().status())
          .isIn(200, 204);
      String later = server
          .http
          .post("/api/assistants")
          .bearer(admin)
          .json("{\"name\":\"Later\",\"type\":\"org_shared\"}")
          .send()
          .json()
          .at("/assistant/_id")
          .asText();
      assertThat(retrieved(server, token, "When does Acme renew?")).doesNotContain(acme);

      Http.Response restored = org.restore(taken, "/");
      assertThat(restored.status()).as(restored.text()).isEqualTo(200);
      assertThat(restored.json().get("rows_restored").asInt()).isGreaterThanOrEqualTo(3);

      // Row for row: the memories read as they did when the snapshot was taken.
      assertThat(memory(server, token, acme)).isEqualTo(acmeBefore);
      assertThat(memory(server, token, globex)).isEqualTo(globexBefore);
      assertThat(memory(server, token, initech).get("state").asText()).isEqualTo("tombstoned");
      // The index follows: retrieval finds the restored memory and not the tombstoned one.
      assertThat(retrieved(server, token, "When does Acme renew?")).contains(acme);
      assertThat(retrieved(server, token, "Initech churned")).doesNotContain(initech);
      // The assistant is back (its history grew a version; none was rewritten); the later one went.
      assertThat(server.http.get("/api/assistants/" + desk).bearer(admin).send().status())
          .isEqualTo(200);
      assertThat(
              server.http.get("/api/assistants/" + later).bearer(admin).send().status())
          .isEqualTo(404);
    }
  }

  @Test
  void aSecondRestoreOverLiveDataWaitsForTheFirst() throws Exception {
    try (TestServer server = TestServer.start()) {
      Org org = org(server);
      org.put("data/a.txt", "a");
      String taken = org.op(
              server.http.post("/v1/nano/" + org.nano() + "/snapshot").json("{}"))
          .json()
          .get("id")
          .asText();
      // What a restore in progress leaves in the journal while it runs.
      try (var db = java.sql.DriverManager.getConnection(
              "jdbc:sqlite:" + server.dataDir().resolve("engram.db"));
          var insert = db.prepareStatement("INSERT INTO snapshot_restores (id, org_id,"
              + " instance_id, snapshot_id, status, started_at) VALUES ('rst_busy', ?, ?, ?,"
              + " 'running', 1)")) {
        insert.setString(1, org.id());
        insert.setString(2, org.nano());
        insert.setString(3, taken);
        insert.executeUpdate();
      }
      Http.Response second = org.restore(taken, "/");
      assertThat(second.status()).as(second.text()).isEqualTo(409);
      assertThat(second.json().at("/error/code").asText()).isEqualTo("restore_in_progress");
      // Into a folder is not a restore over live data: it goes on.
      assertThat(org.restore(taken, "data/copy/").status()).isEqualTo(200);
    }
  }

  private static String remember(TestServer server, String token, String text) {
    Http.Response created = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json("{\"text\":\"" + text + "\"}")
        .send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().get("id").asText();
  }

  private static JsonNode memory(TestServer server, String token, String id) {
    Http.Response memory = server.http.get("/v1/memory/" + id).bearer(token).send();
    assertThat(memory.status()).as(memory.text()).isEqualTo(200);
    return memory.json();
  }

  private static List<String> retrieved(TestServer server, String token, String query) {
    Http.Response found = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json("{\"query\":\"" + query + "\",\"limit\":5}")
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    found.json().get("memories").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  @Test
  void backupsRunOnTheirIntervalAndAFailedOneRaisesItsAlert() throws Exception {
    MutableClock clock = new MutableClock(Instant.parse("2026-11-24T00:00:00Z"));
    Path notADirectory = Files.createTempFile("engram-backups", ".file");
    try (TestServer good = TestServer.builder().clock(clock).start();
        TestServer refusing = TestServer.builder()
            .clock(clock)
            .env("ENGRAM_BACKUP_DIR", notADirectory.toString())
            .start()) {
      Org org = org(good);
      org.put("data/a.txt", "kept");
      good.engram.runStorageHousekeeping();
      JsonNode backups =
          org.op(good.http.get("/v1/nano/" + org.nano() + "/snapshots")).json();
      assertThat(backups.at("/data/0/kind").asText()).isEqualTo("automatic");
      assertThat(backups.at("/data/0/status").asText()).isEqualTo("complete");
      assertThat(Files.exists(good.dataDir()
              .resolve("backups")
              .resolve(backups.at("/data/0/id").asText())
              .resolve("manifest.json")))
          .isTrue();
      // Not again before the interval; again after it.
      good.engram.runStorageHousekeeping();
      assertThat(org.op(good.http.get("/v1/nano/" + org.nano() + "/snapshots"))
              .json()
              .get("data"))
          .hasSize(1);
      clock.advance(Duration.ofHours(6).plusMinutes(1));
      good.engram.runStorageHousekeeping();
      assertThat(org.op(good.http.get("/v1/nano/" + org.nano() + "/snapshots"))
              .json()
              .get("data"))
          .hasSize(2);

      Org broken = org(refusing);
      broken.put("data/a.txt", "at risk");
      refusing.engram.runStorageHousekeeping();
      JsonNode failed = broken
          .op(refusing.http.get("/v1/nano/" + broken.nano() + "/snapshots"))
          .json()
          .at("/data/0");
      assertThat(failed.get("status").asText()).isEqualTo("failed");
      assertThat(failed.get("error").asText()).isNotBlank();
      JsonNode alerts = broken
          .op(refusing.http.get("/v1/organizations/" + broken.id() + "/alerts?kind=backup_failed"))
          .json();
      assertThat(alerts.get("data")).isNotEmpty();
      assertThat(alerts.at("/data/0/state").asText()).isEqualTo("firing");
    }
  }
}
