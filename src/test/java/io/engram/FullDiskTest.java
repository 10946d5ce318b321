package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.SmallDisk;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data directory on a small tmpfs, filled until no byte is left: a memory write, an upload or
 * an organization the server could not keep answers 507 in the family's shape and stores nothing;
 * one it kept is acknowledged; once space returns the memory index recovers by itself (readiness
 * says not ready until it has) and the next writes pass and are found; after a restart every
 * acknowledged memory is there and none that was refused.
 */
class FullDiskTest {
  private static final int TMPFS_MB = 48;

  @TempDir
  Path scratch;

  @Test
  void aFullDiskRefusesWhatItCannotKeepAndTheServerRecoversWhenSpaceReturns() throws Exception {
    try (SmallDisk disk = SmallDisk.mount(scratch.resolve("disk"), TMPFS_MB)) {
      run(disk, disk.dir().resolve("data"));
    }
  }

  /**
   * PostgreSQL whose database lives on a small tmpfs (a tablespace of the local server): a memory
   * write, an organization or a key the database cannot keep answers 507 and leaves nothing
   * behind, in the table or in the index; chats go on; once space returns the next writes pass, and
   * every acknowledged write is there and no refused one.
   */
  @Test
  void aFullDiskUnderPostgresRefusesWhatItCannotKeepAndPassesWhenSpaceReturns() throws Exception {
    // The database server's own user must reach the tablespace: not under a private temp dir.
    Path mountPoint = Files.createTempDirectory(Path.of("/tmp"), "engram-pg-disk");
    Files.setPosixFilePermissions(
        mountPoint, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    String name = "engram_full_" + Long.toHexString(System.nanoTime());
    try (SmallDisk disk = SmallDisk.mount(mountPoint, 40).ownedBy("postgres")) {
      String url = TestDatabases.onTablespace(name, disk.dir());
      try (FakeUpstream upstream = new FakeUpstream();
          TestServer server = startOn(url, upstream);
          Chats chats = new Chats(server)) {
        String org = server.createOrganization("growth");
        String token = server.token(org, null, "memory:write", "memory:read");
        Set<String> acknowledged = new HashSet<>();
        Set<String> refused = new HashSet<>();
        for (int i = 0; i < 5; i++) {
          Http.Response before = remember(server, token, "Before the fill " + i);
          assertThat(before.status()).as(before.text()).isEqualTo(201);
          acknowledged.add(before.json().get("id").asText());
        }
        chats.start(server.token(org, null, "inference:chat", "memory:read"));
        disk.fill();
        int refusals = 0;
        for (int i = 0; i < 400 && refusals < 20; i++) {
          String text = "During the fill " + i + " " + "x".repeat(2000);
          Http.Response written = remember(server, token, text);
          assertThat(written.status()).as(written.text()).isIn(201, 507);
          if (written.status() == 201) {
            acknowledged.add(written.json().get("id").asText());
          } else {
            assertThat(written.json().at("/error/code").asText()).isEqualTo("insufficient_storage");
            refused.add(text);
            refusals++;
          }
        }
        assertThat(refusals).as("writes refused on a full disk").isPositive();
        // An organization and a key are stored in the same database: refused alike, or kept.
        Http.Response created = server.asOperator(
            server.http.post("/v1/organizations").json("{\"name\":\"No room\",\"plan\":\"seed\"}"));
        assertThat(created.status()).as(created.text()).isIn(201, 507);
        Http.Response key = server.asOperator(server
            .http
            .post("/v1/organizations/" + org + "/api-keys")
            .json("{\"name\":\"no room\",\"permissions\":[\"inference\"]}"));
        assertThat(key.status()).as(key.text()).isIn(201, 507);

        disk.empty();
        for (int i = 0; i < 10; i++) {
          Http.Response after = remember(server, token, "After the fill " + i);
          assertThat(after.status()).as(after.text()).isEqualTo(201);
          acknowledged.add(after.json().get("id").asText());
        }
        assertThat(retrieved(server, token, "After the fill 7")).isNotEmpty();
        assertThat(ids(server, token)).containsAll(acknowledged);
        assertThat(texts(server, token)).doesNotContainAnyElementsOf(refused);
        for (String text : refused.stream().limit(3).toList()) {
          assertThat(retrieved(server, token, text)).as("in the index: " + text).isEmpty();
        }
        chats.assertNeverFailed();
        // Usage the full disk could not write waited for room: every answered chat is counted.
        server.engram.inference().flushUsage();
        Http.Response usage =
            server.asOperator(server.http.get("/v1/organizations/" + org + "/usage"));
        assertThat(usage.json().at("/totals/requests").asInt())
            .isGreaterThanOrEqualTo(chats.answered.get());
      } finally {
        TestDatabases.dropWithTablespace(name);
      }
    } finally {
      Files.deleteIfExists(mountPoint);
    }
  }

  private TestServer startOn(String databaseUrl, FakeUpstream upstream) throws IOException {
    return TestServer.builder()
        .env("DATABASE_URL", databaseUrl)
        .env("ENGRAM_SECRET_KEY", "7e57".repeat(16))
        .env("RATE_LIMIT_REQUESTS", "1000000")
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", "upstream-model")
        .env("DEFAULT_MODEL", CHAT_MODEL)
        .start();
  }

  private void run(SmallDisk disk, Path dataDir) throws Exception {
    Files.createDirectories(dataDir);
    Set<String> acknowledged = new HashSet<>();
    Set<String> refused = new HashSet<>();
    String org;
    String token;
    String nano;
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer server = start(dataDir, upstream);
        Chats chats = new Chats(server)) {
      org = server.createOrganization("growth");
      token = server.token(org, null, "memory:write", "memory:read");
      String chatToken = server.token(org, null, "inference:chat", "memory:read");
      nano = server
          .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
          .json()
          .at("/data/0/id")
          .asText();
      for (int i = 0; i < 5; i++) {
        assertThat(remember(server, token, "Before the fill " + i).status()).isEqualTo(201);
      }
      // A tmpfs has no block-device counters: readiness says the iops alert cannot fire here.
      JsonNode checks = server.http.get("/v1/health/ready").send().json().get("checks");
      assertThat(checks.at("/iops_alerts/status").asText()).isEqualTo("unavailable");
      assertThat(checks.at("/iops_alerts/reason").asText()).contains("tmpfs");

      disk.fill();
      // Writes until full and past it: each is either kept and acknowledged, or refused with 507
      // (never a 500, never a 400 that blames the client).
      int refusals = 0;
      for (int i = 0; i < 400 && refusals < 20; i++) {
        String text = "During the fill " + i + " " + "x".repeat(2000);
        Http.Response written = remember(server, token, text);
        assertThat(written.status()).as(written.text()).isIn(201, 507, 503);
        if (written.status() == 201) {
          acknowledged.add(written.json().get("id").asText());
        } else {
          assertThat(written.json().at("/error/code").asText())
              .isIn("insufficient_storage", "database_unavailable");
          refused.add(text);
          refusals++;
        }
      }
      assertThat(refusals).as("writes refused on a full disk").isPositive();
      Http.Response upload = server.asOperator(server
          .http
          .method("PUT", "/v1/nano/" + nano + "/storage/files/data/big.bin")
          .bytes("application/octet-stream", new byte[4 * 1024 * 1024]));
      assertThat(upload.status()).as(upload.text()).isEqualTo(507);
      assertThat(upload.json().at("/error/code").asText()).isEqualTo("insufficient_storage");
      Http.Response created = server.asOperator(
          server.http.post("/v1/organizations").json("{\"name\":\"No room\",\"plan\":\"seed\"}"));
      assertThat(created.status()).as(created.text()).isIn(201, 507);

      // The index meets the full disk too, at its next commit (every 5 s) of what it holds
      // uncommitted: readiness says so. (Should its last commit have come between the last write
      // and the fill, a little room is made for one more write, and the disk filled again.)
      Http.Response readiness = awaitNotReady(server);
      for (int round = 0; round < 3 && readiness.status() == 200; round++) {
        disk.free(2 * 1024 * 1024);
        Http.Response one = remember(server, token, "Room for one " + round);
        assertThat(one.status()).as(one.text()).isEqualTo(201);
        acknowledged.add(one.json().get("id").asText());
        disk.fill();
        readiness = awaitNotReady(server);
      }
      assertThat(readiness.status()).as(readiness.text()).isEqualTo(503);
      assertThat(readiness.json().at("/error/message").asText()).contains("memory index");
      Http.Response meanwhile = remember(server, token, "While the index is out");
      assertThat(meanwhile.status()).as(meanwhile.text()).isIn(201, 507);
      if (meanwhile.status() == 201) {
        acknowledged.add(meanwhile.json().get("id").asText());
      } else {
        refused.add("While the index is out");
      }

      // Space returns: within seconds the index has recovered and writes are found again. Chats
      // go on all the while: the index is closed and reopened under them.
      chats.start(chatToken);
      Thread.sleep(500);
      disk.empty();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      int ready = 0;
      while (System.nanoTime() < deadline
          && (ready = server.http.get("/v1/health/ready").send().status()) != 200) {
        Thread.sleep(200);
      }
      assertThat(ready).as("ready again once space returned").isEqualTo(200);
      for (int i = 0; i < 10; i++) {
        Http.Response after = remember(server, token, "After the fill " + i);
        assertThat(after.status()).as(after.text()).isEqualTo(201);
        acknowledged.add(after.json().get("id").asText());
      }
      assertThat(retrieved(server, token, "After the fill 7")).isNotEmpty();
      Set<String> live = ids(server, token);
      assertThat(live).containsAll(acknowledged);
      assertThat(texts(server, token)).doesNotContainAnyElementsOf(refused);
      chats.assertNeverFailed();
    }
    // Restarted: every acknowledged write is there, no refused one.
    try (TestServer again = start(dataDir, null)) {
      Set<String> live = ids(again, token);
      assertThat(live).containsAll(acknowledged);
      assertThat(texts(again, token)).doesNotContainAnyElementsOf(refused);
      assertThat(again.http.get("/v1/health/ready").send().status()).isEqualTo(200);
    }
  }

  private TestServer start(Path dataDir, FakeUpstream upstream) throws IOException {
    TestServer.Builder builder = TestServer.builder()
        .dataDir(dataDir)
        .env("MODEL_CACHE_DIR", scratch.resolve("models").toString())
        .env("LOG_FILE_PATH", scratch.resolve("app.log").toString())
        .env("RATE_LIMIT_REQUESTS", "1000000");
    if (upstream != null) {
      builder
          .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
          .env("ENGRAM_UPSTREAM_MODEL", "upstream-model")
          .env("DEFAULT_MODEL", CHAT_MODEL);
    }
    return builder.start();
  }

  private static final String CHAT_MODEL = "engram-chat";

  /**
   * Chats with memory on, on /v1/chat/completions and /v1/messages in turn, sent without pause
   * from before the fill until space has returned and the index has reopened: none may fail with
   * a 500. One whose memory cannot be read is answered without it and says so; one whose history
   * the full disk cannot keep is a 507.
   */
  private static final class Chats implements AutoCloseable {
    private final TestServer server;
    private final java.util.concurrent.ExecutorService threads =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    private final java.util.concurrent.atomic.AtomicBoolean running =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    private final java.util.Queue<String> failures =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger answered =
        new java.util.concurrent.atomic.AtomicInteger();

    Chats(TestServer server) {
      this.server = server;
    }

    void start(String token) {
      for (String path : java.util.List.of("/v1/chat/completions", "/v1/messages")) {
        threads.submit(() -> {
          while (running.get()) {
            Http.Response chat = server
                .http
                .post(path)
                .bearer(token)
                .json("{\"model\":\"" + CHAT_MODEL + "\",\"max_tokens\":8,\"messages\":"
                    + "[{\"role\":\"user\",\"content\":\"What happened during the fill?\"}]}")
                .send();
            if (chat.status() == 200) {
              answered.incrementAndGet();
            } else if (chat.status() != 507 && chat.status() != 503) {
              failures.add(path + " -> " + chat.status() + " " + chat.text());
            }
          }
          return null;
        });
      }
    }

    void assertNeverFailed() {
      close();
      assertThat(failures)
          .as("chats that failed otherwise than for the full disk")
          .isEmpty();
      assertThat(answered.get()).as("chats answered").isPositive();
    }

    @Override
    public void close() {
      running.set(false);
      threads.shutdown();
      try {
        threads.awaitTermination(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Readiness once it is no longer 200, or 200 after 8 s. */
  private static Http.Response awaitNotReady(TestServer server) throws InterruptedException {
    long by = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
    Http.Response readiness = server.http.get("/v1/health/ready").send();
    while (readiness.status() == 200 && System.nanoTime() < by) {
      Thread.sleep(200);
      readiness = server.http.get("/v1/health/ready").send();
    }
    return readiness;
  }

  private static Http.Response remember(TestServer server, String token, String text) {
    return server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json(Json.write(Map.of("text", text)))
        .send();
  }

  private static List<String> retrieved(TestServer server, String token, String query) {
    Http.Response found = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json(Json.write(Map.of("query", query, "limit", 5)))
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    found.json().get("memories").forEach(m -> ids.add(m.get("text").asText()));
    return ids.stream().filter(text -> text.equals(query)).toList();
  }

  private static Set<String> ids(TestServer server, String token) {
    Set<String> ids = new HashSet<>();
    memories(server, token).forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  private static Set<String> texts(TestServer server, String token) {
    Set<String> texts = new HashSet<>();
    memories(server, token).forEach(m -> texts.add(m.get("text").asText()));
    return texts;
  }

  private static List<JsonNode> memories(TestServer server, String token) {
    List<JsonNode> all = new ArrayList<>();
    String cursor = null;
    do {
      Http.Response page = server
          .http
          .get("/v1/memory?limit=100" + (cursor == null ? "" : "&before=" + cursor))
          .bearer(token)
          .send();
      assertThat(page.status()).as(page.text()).isEqualTo(200);
      page.json().get("data").forEach(all::add);
      JsonNode next = page.json().get("nextBefore");
      cursor = next == null || next.isNull() ? null : next.asText();
    } while (cursor != null);
    return all;
  }
}
