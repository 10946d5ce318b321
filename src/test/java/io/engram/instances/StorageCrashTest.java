package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.BesideTheRest;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 in the middle of an upload that replaces a file: after the restart the old file is
 * there whole, nothing of the cut upload is left, and the file can be written again.
 */
@BesideTheRest
class StorageCrashTest {
  @TempDir
  Path dataDir;

  private Map<String, String> env() {
    return Map.of(
        "ENGRAM_DATA_DIR", dataDir.toString(),
        "ENGRAM_ADMIN_KEY", TestServer.ADMIN_KEY,
        "LOG_FILE_PATH", dataDir.resolve("app.log").toString());
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  private static HttpResponse<byte[]> send(ServerProcess server, HttpRequest.Builder request)
      throws Exception {
    return HttpClient.newHttpClient()
        .send(
            request.header("Authorization", "Bearer " + TestServer.ADMIN_KEY).build(),
            HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void aCutUploadLeavesTheOldFileWhole() throws Exception {
    byte[] first = new byte[1024 * 1024];
    new Random(1).nextBytes(first);
    String nano;
    String file;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String base = "http://127.0.0.1:" + server.port;
      nano = organizationWithInstance(server, "Crash")[1];
      file = "/v1/nano/" + nano + "/storage/files/training_data/set.bin";
      assertThat(send(
                  server,
                  HttpRequest.newBuilder(URI.create(base + file))
                      .PUT(HttpRequest.BodyPublishers.ofByteArray(first)))
              .statusCode())
          .isEqualTo(201);

      // A replacing upload of 10 MB, cut after 3 MB by kill -9.
      Path tmp = dataDir.resolve("instances").resolve(nano).resolve("tmp");
      try (Socket socket = new Socket("127.0.0.1", server.port)) {
        OutputStream out = socket.getOutputStream();
        out.write(("PUT " + file + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                + TestServer.ADMIN_KEY + "\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + (10 * 1024 * 1024) + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        byte[] chunk = new byte[64 * 1024];
        for (int sent = 0; sent < 3 * 1024 * 1024; sent += chunk.length) {
          out.write(chunk);
        }
        out.flush();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!hasFiles(tmp) && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertThat(hasFiles(tmp)).as("the upload is being written").isTrue();
        server.kill9();
      }
    }
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String base = "http://127.0.0.1:" + server.port;
      HttpResponse<byte[]> read =
          send(server, HttpRequest.newBuilder(URI.create(base + file)).GET());
      assertThat(read.statusCode()).isEqualTo(200);
      assertThat(sha256(read.body())).isEqualTo(sha256(first));
      Path instanceDir = dataDir.resolve("instances").resolve(nano);
      assertThat(hasFiles(instanceDir.resolve("tmp")))
          .as("the cut upload is gone")
          .isFalse();
      try (Stream<Path> blobs = Files.list(instanceDir.resolve("blobs"))) {
        assertThat(blobs.count()).isEqualTo(1);
      }
      byte[] second = "again".getBytes(StandardCharsets.UTF_8);
      assertThat(send(
                  server,
                  HttpRequest.newBuilder(URI.create(base + file))
                      .PUT(HttpRequest.BodyPublishers.ofByteArray(second)))
              .statusCode())
          .isEqualTo(200);
    }
  }

  @Test
  void aSnapshotCutByAStopIsFailedAndItsPartsRemovedAtStart() throws Exception {
    String nano;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String[] created = organizationWithInstance(server, "Cut");
      String org = created[0];
      nano = created[1];
      server.kill9();
      server.awaitExit(Duration.ofSeconds(30));
      // What a kill in the middle of a snapshot leaves: its row 'creating', part of its folder.
      Path partial = dataDir.resolve("snapshots").resolve("snap_cut");
      Files.createDirectories(partial.resolve("blobs"));
      Files.writeString(partial.resolve("blobs").resolve("blob_half"), "half");
      try (var db =
              java.sql.DriverManager.getConnection("jdbc:sqlite:" + dataDir.resolve("engram.db"));
          var insert = db.prepareStatement("INSERT INTO snapshots (id, org_id, instance_id, kind,"
              + " status, location, created_at, expires_at) VALUES ('snap_cut', ?, ?, 'manual',"
              + " 'creating', ?, 1, 9999999999999)")) {
        insert.setString(1, org);
        insert.setString(2, nano);
        insert.setString(3, partial.toString());
        insert.executeUpdate();
      }
    }
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      var snapshot = server
          .http()
          .get("/v1/nano/" + nano + "/snapshots/snap_cut")
          .bearer(TestServer.ADMIN_KEY)
          .send()
          .json();
      assertThat(snapshot.get("status").asText()).isEqualTo("failed");
      assertThat(snapshot.get("error").asText()).contains("interrupted");
      assertThat(Files.exists(dataDir.resolve("snapshots").resolve("snap_cut"))).isFalse();
    }
  }

  @Test
  void aRestoreCutByKillNineIsFinishedAtTheNextStart() throws Exception {
    int count = 32;
    byte[][] before = new byte[count][];
    String nano;
    String acme;
    String token;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String base = "http://127.0.0.1:" + server.port;
      String[] created = organizationWithInstance(server, "Restore");
      nano = created[1];
      token = server
          .http()
          .post("/v1/organizations/" + created[0] + "/tokens")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"name\":\"t\",\"scopes\":[\"memory:write\",\"memory:read\",\"memory:delete\"]}")
          .send()
          .json()
          .get("token")
          .asText();
      acme = server
          .http()
          .post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"Acme renews its contract in March\"}")
          .send()
          .json()
          .get("id")
          .asText();
      Random random = new Random(3);
      for (int i = 0; i < count; i++) {
        before[i] = new byte[4 * 1024 * 1024];
        random.nextBytes(before[i]);
        put(server, base, nano, i, before[i]);
      }
      String snapshot = server
          .http()
          .post("/v1/nano/" + nano + "/snapshot")
          .bearer(TestServer.ADMIN_KEY)
          .json("{}")
          .send()
          .json()
          .get("id")
          .asText();
      // Everything changes after the snapshot: every file, and the memory is deleted.
      byte[] after = new byte[4 * 1024 * 1024];
      for (int i = 0; i < count; i++) {
        random.nextBytes(after);
        put(server, base, nano, i, after);
      }
      assertThat(server.http().delete("/v1/memory/" + acme).bearer(token).send().status())
          .isEqualTo(200);

      var restore = HttpClient.newHttpClient()
          .sendAsync(
              HttpRequest.newBuilder(URI.create(base + "/v1/nano/" + nano + "/restore"))
                  .header("Authorization", "Bearer " + TestServer.ADMIN_KEY)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(
                      "{\"snapshot_id\":\"" + snapshot + "\",\"restore_path\":\"/\"}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      // Cut as soon as the first file is back, long before the last.
      String first = sha256(before[0]);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!etag(server, base, nano, 0).equals('"' + first + '"')) {
        assertThat(System.nanoTime()).isLessThan(deadline);
        Thread.sleep(5);
      }
      server.kill9();
      assertThat(restore.isDone()
              && !restore.isCompletedExceptionally()
              && restore.join().statusCode() == 200)
          .as("the restore was cut before it finished")
          .isFalse();
      int restored = 0;
      for (int i = 0; i < count; i++) {
        if (Files.exists(dataDir) && etagOnDisk(i, nano, sha256(before[i]))) {
          restored++;
        }
      }
      assertThat(restored).isLessThan(count);
    }
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(120))) {
      String base = "http://127.0.0.1:" + server.port;
      assertThat(server.stdout()).contains("finished 1 restores a stop had interrupted");
      for (int i = 0; i < count; i++) {
        assertThat(etag(server, base, nano, i)).isEqualTo('"' + sha256(before[i]) + '"');
      }
      assertThat(server
              .http()
              .get("/v1/memory/" + acme)
              .bearer(token)
              .send()
              .json()
              .get("state")
              .asText())
          .isEqualTo("durable");
    }
  }

  @Test
  void aSnapshotCutByKillNineLeavesTheLiveDataWholeAndIsMarkedFailed() throws Exception {
    int count = 40;
    String[] sums = new String[count];
    String nano;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String base = "http://127.0.0.1:" + server.port;
      nano = organizationWithInstance(server, "Cut snapshot")[1];
      Random random = new Random(4);
      byte[] bytes = new byte[4 * 1024 * 1024];
      for (int i = 0; i < count; i++) {
        random.nextBytes(bytes);
        sums[i] = sha256(bytes);
        put(server, base, nano, i, bytes);
      }
      var snapshot = HttpClient.newHttpClient()
          .sendAsync(
              HttpRequest.newBuilder(URI.create(base + "/v1/nano/" + nano + "/snapshot"))
                  .header("Authorization", "Bearer " + TestServer.ADMIN_KEY)
                  .header("Content-Type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      Path snapshots = dataDir.resolve("snapshots");
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!hasFiles(snapshots)) {
        assertThat(System.nanoTime()).isLessThan(deadline);
        Thread.sleep(2);
      }
      server.kill9();
      assertThat(snapshot.isDone()
              && !snapshot.isCompletedExceptionally()
              && snapshot.join().statusCode() == 201)
          .as("the snapshot was cut before it finished")
          .isFalse();
    }
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      String base = "http://127.0.0.1:" + server.port;
      var list = server
          .http()
          .get("/v1/nano/" + nano + "/snapshots")
          .bearer(TestServer.ADMIN_KEY)
          .send()
          .json()
          .get("data");
      assertThat(list).hasSize(1);
      assertThat(list.get(0).get("status").asText()).isEqualTo("failed");
      assertThat(list.get(0).get("error").asText()).contains("interrupted");
      assertThat(hasFiles(dataDir.resolve("snapshots"))).isFalse();
      for (int i = 0; i < count; i++) {
        assertThat(etag(server, base, nano, i)).isEqualTo('"' + sums[i] + '"');
      }
    }
  }

  /** Whether file {@code i} already holds the snapshot's bytes, read from the database file. */
  private boolean etagOnDisk(int i, String nano, String sha) throws Exception {
    try (var db =
            java.sql.DriverManager.getConnection("jdbc:sqlite:" + dataDir.resolve("engram.db"));
        var query = db.prepareStatement(
            "SELECT sha256 FROM storage_files WHERE instance_id = ? AND path = ?")) {
      query.setString(1, nano);
      query.setString(2, "data/part-" + i + ".bin");
      try (var rows = query.executeQuery()) {
        return rows.next() && rows.getString(1).equals(sha);
      }
    }
  }

  private static void put(ServerProcess server, String base, String nano, int i, byte[] bytes)
      throws Exception {
    assertThat(send(
                server,
                HttpRequest.newBuilder(URI.create(
                        base + "/v1/nano/" + nano + "/storage/files/data/part-" + i + ".bin"))
                    .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes)))
            .statusCode())
        .isIn(200, 201);
  }

  private static String etag(ServerProcess server, String base, String nano, int i)
      throws Exception {
    return send(
            server,
            HttpRequest.newBuilder(URI.create(
                    base + "/v1/nano/" + nano + "/storage/files/data/part-" + i + ".bin"))
                .method("HEAD", HttpRequest.BodyPublishers.noBody()))
        .headers()
        .firstValue("ETag")
        .orElse("");
  }

  /** A new organization's id and its default instance's. */
  private static String[] organizationWithInstance(ServerProcess server, String name) {
    String org = server
        .http()
        .post("/v1/organizations")
        .bearer(TestServer.ADMIN_KEY)
        .json("{\"name\":\"" + name + "\",\"plan\":\"seed\"}")
        .send()
        .json()
        .get("id")
        .asText();
    String nano = server
        .http()
        .get("/v1/organizations/" + org + "/instances")
        .bearer(TestServer.ADMIN_KEY)
        .send()
        .json()
        .at("/data/0/id")
        .asText();
    return new String[] {org, nano};
  }

  private static boolean hasFiles(Path dir) throws Exception {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.findAny().isPresent();
    }
  }
}
