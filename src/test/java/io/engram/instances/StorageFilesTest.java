package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The file API of an instance's storage, over real HTTP: upload, download whole and by range,
 * HEAD, conditional writes, listing by prefix a page at a time, deletion, confined paths, the
 * allowance refused before a byte is kept, usage measured and the storage log.
 */
class StorageFilesTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private record Org(String id, String instance, String admin) {
    String file(String path) {
      return "/v1/nano/" + instance + "/storage/files/" + path;
    }

    Http.Response get(String path) {
      return server.http.get(file(path)).bearer(admin).send();
    }

    Http.Response delete(String path) {
      return server.http.delete(file(path)).bearer(admin).send();
    }
  }

  private static Org org(String plan) {
    String id = server.createOrganization(plan);
    String instance = server
        .asOperator(server.http.get("/v1/organizations/" + id + "/instances"))
        .json()
        .get("data")
        .get(0)
        .get("id")
        .asText();
    return new Org(id, instance, server.apiKey(id, 100_000, "admin"));
  }

  private static Http.Response put(Org org, String path, byte[] bytes) {
    return server
        .http
        .method("PUT", org.file(path))
        .bearer(org.admin())
        .bytes("application/octet-stream", bytes)
        .send();
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  @Test
  void aFileGoesInWholeAndComesOutWholeOrByRange() throws Exception {
    Org org = org("seed");
    byte[] text = "line one\nline two\nline three\n".getBytes(StandardCharsets.UTF_8);
    Http.Response created = put(org, "data/notes/a.txt", text);
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    assertThat(created.json().get("bytes").asLong()).isEqualTo(text.length);
    assertThat(created.json().get("sha256").asText()).isEqualTo(sha256(text));
    assertThat(created.json().get("data_class").asText()).isEqualTo("data");
    String etag = created.header("ETag");
    assertThat(etag).isEqualTo('"' + sha256(text) + '"');

    Http.Response whole = org.get("data/notes/a.txt");
    assertThat(whole.status()).isEqualTo(200);
    assertThat(whole.text()).isEqualTo(new String(text, StandardCharsets.UTF_8));
    assertThat(whole.header("ETag")).isEqualTo(etag);
    assertThat(whole.header("Accept-Ranges")).isEqualTo("bytes");

    Http.Response range = server
        .http
        .get(org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("Range", "bytes=5-7")
        .send();
    assertThat(range.status()).isEqualTo(206);
    assertThat(range.text()).isEqualTo("one");
    assertThat(range.header("Content-Range")).isEqualTo("bytes 5-7/" + text.length);
    Http.Response suffix = server
        .http
        .get(org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("Range", "bytes=-6")
        .send();
    assertThat(suffix.text()).isEqualTo("three\n");
    Http.Response outside = server
        .http
        .get(org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("Range", "bytes=999-")
        .send();
    assertThat(outside.status()).as(outside.text()).isEqualTo(416);
    assertThat(outside.header("Content-Range")).isEqualTo("bytes */" + text.length);
    // A number too long for a long is not a range read (the whole file), never a 500.
    Http.Response huge = server
        .http
        .get(org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("Range", "bytes=9999999999999999999-")
        .send();
    assertThat(huge.status()).isEqualTo(200);
    Http.Response unchanged = server
        .http
        .get(org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("If-None-Match", etag)
        .send();
    assertThat(unchanged.status()).isEqualTo(304);

    Http.Response head = server
        .http
        .method("HEAD", org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .send();
    assertThat(head.status()).isEqualTo(200);
    assertThat(head.header("Content-Length")).isEqualTo(Integer.toString(text.length));
    assertThat(head.header("ETag")).isEqualTo(etag);

    // Conditional writes: create-only refuses an existing file; If-Match must name its ETag.
    Http.Response createOnly = server
        .http
        .method("PUT", org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("If-None-Match", "*")
        .bytes("text/plain", "x".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(createOnly.status()).isEqualTo(412);
    Http.Response stale = server
        .http
        .method("PUT", org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("If-Match", "\"0000\"")
        .bytes("text/plain", "x".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(stale.status()).isEqualTo(412);
    Http.Response replaced = server
        .http
        .method("PUT", org.file("data/notes/a.txt"))
        .bearer(org.admin())
        .header("If-Match", etag)
        .bytes("text/plain", "new".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(replaced.status()).as(replaced.text()).isEqualTo(200);
    assertThat(org.get("data/notes/a.txt").text()).isEqualTo("new");
    assertThat(org.get("data/notes/a.txt").header("Content-Type")).startsWith("text/plain");

    assertThat(org.delete("data/notes/a.txt").status()).isEqualTo(204);
    assertThat(org.get("data/notes/a.txt").status()).isEqualTo(404);
    assertThat(org.delete("data/notes/a.txt").status()).isEqualTo(404);
  }

  @Test
  void aLargeBinaryFileKeepsEveryByteAndOnlyOneBlobStays() throws Exception {
    Org org = org("seed");
    byte[] bytes = new byte[5 * 1024 * 1024 + 17];
    new Random(7).nextBytes(bytes);
    assertThat(put(org, "training_data/big.bin", bytes).status()).isEqualTo(201);
    byte[] again = new byte[3 * 1024 * 1024];
    new Random(8).nextBytes(again);
    assertThat(put(org, "training_data/big.bin", again).status()).isEqualTo(200);
    java.net.http.HttpResponse<byte[]> download = java.net.http.HttpClient.newHttpClient()
        .send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                    "http://127.0.0.1:" + server.engram.port() + org.file("training_data/big.bin")))
                .header("Authorization", "Bearer " + org.admin())
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofByteArray());
    assertThat(sha256(download.body())).isEqualTo(sha256(again));
    // The replaced blob is gone: one file, one blob, no temporary left.
    Path dir = server.dataDir().resolve("instances").resolve(org.instance());
    try (Stream<Path> blobs = Files.list(dir.resolve("blobs"))) {
      assertThat(blobs.count()).isEqualTo(1);
    }
    try (Stream<Path> temps = Files.list(dir.resolve("tmp"))) {
      assertThat(temps.count()).isZero();
    }
    JsonNode usage = server
        .http
        .get("/v1/organizations/" + org.id() + "/storage")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(usage.get("training_data_gb").decimalValue())
        .isEqualByComparingTo(new java.math.BigDecimal(again.length).movePointLeft(9));
    assertThat(usage.get("limits").get("training_data_gb").asLong()).isEqualTo(50);
    assertThat(server.asOperator(server.http.get("/metrics")).text())
        .containsPattern("engram_storage_transferred_bytes_total\\{direction=\"upload\"} [0-9.E]+")
        .containsPattern(
            "engram_storage_transferred_bytes_total\\{direction=\"download\"} [0-9.E]+");
  }

  @Test
  void pathsAreConfinedAndCheckedBeforeAnythingIsKept() {
    Org org = org("seed");
    byte[] one = {1};
    for (String bad : new String[] {
      "data/../secrets",
      "data/./a",
      "data//a",
      "data/%2e%2e/a",
      "nowhere/a",
      "data",
      "data/a%5Cb",
      "data/" + "x".repeat(300),
      "conversation_history/a.json"
    }) {
      Http.Response refused = put(org, bad, one);
      assertThat(refused.status()).as(bad + ": " + refused.text()).isIn(400, 403, 404);
      assertThat(refused.text()).contains("\"error\"");
    }
    assertThat(server
            .http
            .get("/v1/nano/" + org.instance() + "/storage/files")
            .bearer(org.admin())
            .send()
            .json()
            .get("data"))
        .isEmpty();
  }

  @Test
  void listingByPrefixComesAPageAtATime() {
    Org org = org("seed");
    for (int i = 0; i < 7; i++) {
      put(
          org,
          "results/run-" + i + ".json",
          ("{\"i\":" + i + "}").getBytes(StandardCharsets.UTF_8));
    }
    put(org, "data/other.txt", new byte[] {1});
    String base = "/v1/nano/" + org.instance() + "/storage/files?prefix=results/&limit=3";
    JsonNode first = server.http.get(base).bearer(org.admin()).send().json();
    assertThat(first.get("data")).hasSize(3);
    assertThat(first.get("has_more").asBoolean()).isTrue();
    JsonNode second = server
        .http
        .get(base + "&after=" + first.get("next").asText())
        .bearer(org.admin())
        .send()
        .json();
    JsonNode third = server
        .http
        .get(base + "&after=" + second.get("next").asText())
        .bearer(org.admin())
        .send()
        .json();
    assertThat(third.get("data")).hasSize(1);
    assertThat(third.get("has_more").asBoolean()).isFalse();
    assertThat(third.get("data").get(0).get("path").asText()).isEqualTo("results/run-6.json");
    assertThat(server
            .http
            .get("/v1/nano/" + org.instance() + "/storage/files?prefix=../")
            .bearer(org.admin())
            .send()
            .status())
        .isEqualTo(400);

    JsonNode log = server
        .http
        .get("/v1/nano/" + org.instance() + "/storage/logs?limit=5")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(log.get("data")).hasSize(5);
    assertThat(log.get("data").get(0).get("path").asText()).isEqualTo("data/other.txt");
    assertThat(log.get("data").get(0).get("action").asText()).isEqualTo("create");
    JsonNode older = server
        .http
        .get("/v1/nano/" + org.instance() + "/storage/logs?before="
            + log.get("next").asText())
        .bearer(org.admin())
        .send()
        .json();
    assertThat(older.get("data")).hasSize(3);
  }

  @Test
  void anUploadPastTheAllowanceIsRefusedBeforeAByteIsKept() throws Exception {
    Org org = org("free"); // 1 GB
    // A declared length past the allowance: refused from the headers, the body never read.
    try (Socket socket = new Socket("127.0.0.1", server.engram.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(("PUT " + org.file("data/huge.bin") + " HTTP/1.1\r\nHost: x\r\n"
              + "Authorization: Bearer " + org.admin() + "\r\n"
              + "Content-Type: application/octet-stream\r\n"
              + "Content-Length: 2000000000\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.write(new byte[1024]);
      out.flush();
      InputStream in = socket.getInputStream();
      String answer = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(answer).isEqualTo("HTTP/1.1 403");
    }
    assertThat(org.get("data/huge.bin").status()).isEqualTo(404);
    JsonNode log = server
        .http
        .get("/v1/nano/" + org.instance() + "/storage/logs")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(log.get("data").get(0).get("result").asText()).contains("refused");
    Path dir = server.dataDir().resolve("instances").resolve(org.instance());
    if (Files.exists(dir)) {
      try (Stream<Path> files = Files.walk(dir)) {
        assertThat(files.filter(Files::isRegularFile).count()).isZero();
      }
    }
  }

  @Test
  void filesAndFoldersCopyToAnotherInstanceOfTheSameOrganization() throws Exception {
    Org org = org("seed");
    put(org, "results/run/a.json", "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
    put(org, "results/run/deep/b.json", "{\"b\":2}".getBytes(StandardCharsets.UTF_8));
    String other = server
        .asOperator(server
            .http
            .post("/v1/organizations/" + org.id() + "/instances")
            .json("{\"name\":\"archive\"}"))
        .json()
        .get("id")
        .asText();
    Http.Response folder = server
        .http
        .post("/v1/nano/" + org.instance() + "/storage/copy")
        .bearer(org.admin())
        .json("{\"source_path\":\"results/run/\",\"destination_nano\":\"" + other
            + "\",\"destination_path\":\"data/kept/\"}")
        .send();
    JsonNode copied = Jobs.succeeded(server, org.admin(), folder);
    assertThat(copied.get("kind").asText()).isEqualTo("copy");
    assertThat(copied.at("/progress/files_done").asInt()).isEqualTo(2);
    assertThat(copied.at("/progress/bytes_done").asLong()).isEqualTo(14);
    assertThat(server
            .http
            .get("/v1/nano/" + other + "/storage/files/data/kept/deep/b.json")
            .bearer(org.admin())
            .send()
            .text())
        .isEqualTo("{\"b\":2}");
    Http.Response one = server
        .http
        .post("/v1/nano/" + org.instance() + "/storage/copy")
        .bearer(org.admin())
        .json("{\"source_path\":\"results/run/a.json\",\"destination_nano\":\"" + org.instance()
            + "\",\"destination_path\":\"data/a-copy.json\"}")
        .send();
    Jobs.succeeded(server, org.admin(), one);
    assertThat(org.get("data/a-copy.json").header("ETag"))
        .isEqualTo(org.get("results/run/a.json").header("ETag"));
    // One file into a folder keeps its name there.
    Http.Response intoFolder = server
        .http
        .post("/v1/nano/" + org.instance() + "/storage/copy")
        .bearer(org.admin())
        .json("{\"source_path\":\"results/run/a.json\",\"destination_nano\":\"" + org.instance()
            + "\",\"destination_path\":\"data/inbox/\"}")
        .send();
    Jobs.succeeded(server, org.admin(), intoFolder);
    assertThat(org.get("data/inbox/a.json").header("ETag"))
        .isEqualTo(org.get("results/run/a.json").header("ETag"));

    // Another organization's instance is not a destination; bad paths are named.
    Org stranger = org("seed");
    Http.Response foreign = server
        .http
        .post("/v1/nano/" + org.instance() + "/storage/copy")
        .bearer(org.admin())
        .json("{\"source_path\":\"results/run/a.json\",\"destination_nano\":\""
            + stranger.instance() + "\",\"destination_path\":\"data/x.json\"}")
        .send();
    assertThat(foreign.status()).isEqualTo(404);
    for (String[] bad : new String[][] {
      {"results/run/", "data/not-a-folder"},
      {"results/none.json", "data/x"},
      {"results/run/a.json", "../x"},
      {"results/run/a.json", "conversation_history/x"}
    }) {
      Http.Response refused = server
          .http
          .post("/v1/nano/" + org.instance() + "/storage/copy")
          .bearer(org.admin())
          .json("{\"source_path\":\"" + bad[0] + "\",\"destination_nano\":\"" + org.instance()
              + "\",\"destination_path\":\"" + bad[1] + "\"}")
          .send();
      assertThat(refused.status())
          .as(String.join(" -> ", bad) + refused.text())
          .isIn(400, 403, 404);
    }
  }
}
