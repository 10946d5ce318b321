package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.TinyModel;
import io.engram.inference.models.ModelUploads;
import io.engram.support.Http;
import io.engram.support.MultipartForm;
import io.engram.support.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** POST /v1/models over HTTP: a real multipart upload of the project's tiny model, then served by jlama. */
class ModelUploadTest {
  static Path models;
  static TestServer server;
  static String orgId;
  static String modelsKey;
  static String otherOrgKey;
  static Map<String, byte[]> tiny = new LinkedHashMap<>();

  @BeforeAll
  static void start() throws IOException {
    models = Files.createTempDirectory("engram-upload-models");
    Path source = TinyModel.write(Files.createTempDirectory("engram-tiny-source"), 11);
    tiny.put("file", Files.readAllBytes(source.resolve("model.safetensors")));
    tiny.put("config", Files.readAllBytes(source.resolve("config.json")));
    tiny.put("tokenizer", Files.readAllBytes(source.resolve("tokenizer.json")));
    tiny.put("tokenizer_config", Files.readAllBytes(source.resolve("tokenizer_config.json")));
    server = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("WORKER_PROCESSES", "1")
        .env("MAX_MODEL_SIZE_GB", "1")
        .start();
    orgId = server.createOrganization("seed");
    modelsKey = server.apiKey(orgId, 1000, "models", "inference");
    otherOrgKey = server.apiKey(server.createOrganization("seed"), 1000, "admin");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static MultipartForm form(String modelId, String modelType) {
    MultipartForm form =
        new MultipartForm().field("model_id", modelId).field("model_type", modelType);
    tiny.forEach((part, bytes) -> form.file(part, part + ".bin", bytes));
    return form;
  }

  private static Http.Response upload(String key, MultipartForm form) {
    return server
        .http
        .post("/v1/models")
        .bearer(key)
        .bytes(form.contentType(), form.bytes())
        .send();
  }

  private static Http.Response chat(String key, String model) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json(
            "{\"model\":\"" + model
                + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}],\"max_tokens\":4,\"memory\":false}")
        .send();
  }

  @Test
  void anUploadedModelIsListedAndServedToItsOrganizationOnly() {
    Http.Response created = upload(modelsKey, form("team-tiny", "llama"));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    assertThat(created.json().get("id").asText()).isEqualTo("team-tiny");
    assertThat(created.json().get("owned_by").asText()).isEqualTo(orgId);
    assertThat(created.json().get("context_length").asInt()).isEqualTo(2048);
    assertThat(created.json().get("parameters").asText()).endsWith("K");
    assertThat(models
            .resolve(".uploads")
            .resolve(orgId)
            .resolve("team-tiny")
            .resolve("model.safetensors"))
        .exists();

    JsonNode listed =
        server.http.get("/v1/models").bearer(modelsKey).send().json().get("data");
    assertThat(listed.findValuesAsText("id")).contains("team-tiny");
    assertThat(server.http.get("/v1/models/team-tiny").bearer(modelsKey).send().status())
        .isEqualTo(200);
    Http.Response reply = chat(modelsKey, "team-tiny");
    assertThat(reply.status()).as(reply.text()).isEqualTo(200);
    assertThat(reply.json().get("usage").get("completion_tokens").asInt()).isBetween(1, 4);

    // Another organization neither sees nor uses it, and may use the same id for its own.
    assertThat(
            server.http.get("/v1/models/team-tiny").bearer(otherOrgKey).send().status())
        .isEqualTo(404);
    assertThat(server
            .http
            .get("/v1/models")
            .bearer(otherOrgKey)
            .send()
            .json()
            .get("data")
            .findValuesAsText("id"))
        .doesNotContain("team-tiny");
    Http.Response foreign = chat(otherOrgKey, "team-tiny");
    assertThat(foreign.status()).isEqualTo(404);
    assertThat(foreign.json().get("error").get("code").asText()).isEqualTo("model_not_found");
    assertThat(upload(otherOrgKey, form("team-tiny", "llama")).status()).isEqualTo(201);
    assertNoStagingLeft();
  }

  /**
   * The spec's own form, file, config, model_id and model_type and nothing else: the tokenizer
   * travels inside the weights (a zip of the model's files) or inside config.json.
   */
  @Test
  void theSpecsFormIsAcceptedWithTheTokenizerInsideTheWeightsOrTheConfig() throws IOException {
    java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
    try (java.util.zip.ZipOutputStream zip = new java.util.zip.ZipOutputStream(zipped)) {
      for (String[] entry : new String[][] {
        {"tiny/model.safetensors", "file"},
        {"tiny/tokenizer.json", "tokenizer"},
        {"tiny/tokenizer_config.json", "tokenizer_config"}
      }) {
        zip.putNextEntry(new java.util.zip.ZipEntry(entry[0]));
        zip.write(tiny.get(entry[1]));
        zip.closeEntry();
      }
    }
    MultipartForm archived = new MultipartForm()
        .field("model_id", "spec-zip")
        .field("model_type", "llama")
        .file("file", "tiny.zip", zipped.toByteArray())
        .file("config", "config.json", tiny.get("config"));
    Http.Response fromArchive = upload(modelsKey, archived);
    assertThat(fromArchive.status()).as(fromArchive.text()).isEqualTo(201);
    assertThat(chat(modelsKey, "spec-zip").status()).isEqualTo(200);

    com.fasterxml.jackson.databind.node.ObjectNode config =
        (com.fasterxml.jackson.databind.node.ObjectNode) io.engram.platform.json.Json.read(
            new String(tiny.get("config"), StandardCharsets.UTF_8), JsonNode.class);
    config.set(
        "tokenizer",
        io.engram.platform.json.Json.read(
            new String(tiny.get("tokenizer"), StandardCharsets.UTF_8), JsonNode.class));
    config.set(
        "tokenizer_config",
        io.engram.platform.json.Json.read(
            new String(tiny.get("tokenizer_config"), StandardCharsets.UTF_8), JsonNode.class));
    MultipartForm inConfig = new MultipartForm()
        .field("model_id", "spec-config")
        .field("model_type", "llama")
        .file("file", "model.safetensors", tiny.get("file"))
        .file(
            "config",
            "config.json",
            io.engram.platform.json.Json.write(config).getBytes(StandardCharsets.UTF_8));
    Http.Response fromConfig = upload(modelsKey, inConfig);
    assertThat(fromConfig.status()).as(fromConfig.text()).isEqualTo(201);
    Http.Response served = chat(modelsKey, "spec-config");
    assertThat(served.status()).as(served.text()).isEqualTo(200);
    assertNoStagingLeft();
  }

  @Test
  void aTakenIdIsAConflict() {
    assertThat(upload(modelsKey, form("taken-tiny", "llama")).status()).isEqualTo(201);
    Http.Response again = upload(modelsKey, form("taken-tiny", "llama"));
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.json().get("error").get("code").asText()).isEqualTo("model_exists");
    assertThat(upload(modelsKey, form(EmbeddingRoutes.MODEL_ID, "llama")).status())
        .isEqualTo(409);
    assertNoStagingLeft();
  }

  @Test
  void onlyKeysWithTheModelsPermissionUpload() {
    String inferenceOnly = server.apiKey(orgId, 1000, "inference");
    Http.Response refused = upload(inferenceOnly, form("not-allowed", "llama"));
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().get("error").get("type").asText()).isEqualTo("authorization_error");
    String token = server.token(orgId, null, "inference:chat");
    assertThat(upload(token, form("not-allowed", "llama")).status()).isEqualTo(403);
    MultipartForm form = form("not-allowed", "llama");
    assertThat(server
            .http
            .post("/v1/models")
            .bytes(form.contentType(), form.bytes())
            .send()
            .status())
        .isEqualTo(401);
    assertThat(models.resolve(".uploads").resolve(orgId).resolve("not-allowed")).doesNotExist();
  }

  @Test
  void badUploadsAreRefusedWithTheirReasonAndLeaveNothingBehind() throws IOException {
    assertBad(
        server
            .http
            .post("/v1/models")
            .bearer(modelsKey)
            .json("{\"model_id\":\"x\"}")
            .send(),
        415,
        null);
    assertBad(
        server
            .http
            .post("/v1/models")
            .bearer(modelsKey)
            .bytes("multipart/form-data", new byte[10])
            .send(),
        400,
        null);
    MultipartForm noTokenizer = new MultipartForm()
        .field("model_id", "bad")
        .field("model_type", "llama")
        .file("file", "w", tiny.get("file"))
        .file("config", "c", tiny.get("config"));
    assertBad(upload(modelsKey, noTokenizer), 400, "tokenizer");
    assertBad(upload(modelsKey, form("../escape", "llama")), 400, "model_id");
    assertBad(upload(modelsKey, form("", "llama")), 400, "model_id");
    assertBad(upload(modelsKey, form("x".repeat(129), "llama")), 400, "model_id");
    assertBad(upload(modelsKey, form("bad", "bert")), 400, "model_type");
    assertBad(upload(modelsKey, form("bad", "mistral")), 400, "config");
    assertBad(upload(modelsKey, form("bad", "llama").field("extra", "1")), 400, "extra");
    assertBad(
        upload(modelsKey, form("bad", "llama").field("model_type", "llama")), 400, "model_type");
    assertBad(
        upload(modelsKey, with("config", "{not json".getBytes(StandardCharsets.UTF_8))),
        400,
        "config");
    assertBad(
        upload(modelsKey, with("tokenizer", "[1,2]".getBytes(StandardCharsets.UTF_8))),
        400,
        "tokenizer");
    // Dimensions that do not describe the weights, or would make the engine allocate without bound.
    String config = new String(tiny.get("config"), StandardCharsets.UTF_8);
    assertBad(
        upload(
            modelsKey,
            with(
                "config",
                config
                    .replace("\"hidden_size\":64", "\"hidden_size\":1000000")
                    .getBytes(StandardCharsets.UTF_8))),
        400,
        "config");
    assertBad(
        upload(
            modelsKey,
            with(
                "config",
                config
                    .replace(
                        "\"max_position_embeddings\":2048",
                        "\"max_position_embeddings\":2000000000")
                    .getBytes(StandardCharsets.UTF_8))),
        400,
        "config");
    assertBad(
        upload(
            modelsKey,
            with(
                "config",
                config
                    .replace("\"num_attention_heads\":4", "\"num_attention_heads\":3")
                    .getBytes(StandardCharsets.UTF_8))),
        400,
        "config");
    byte[] weights = tiny.get("file");
    assertBad(
        upload(modelsKey, with("file", Arrays.copyOf(weights, weights.length - 100))), 400, "file");
    byte[] hugeHeader = weights.clone();
    ByteBuffer.wrap(hugeHeader).order(ByteOrder.LITTLE_ENDIAN).putLong(0, Long.MAX_VALUE);
    assertBad(upload(modelsKey, with("file", hugeHeader)), 400, "file");
    // A well-formed safetensors file with the embedding config.json describes and nothing else: the
    // header checks pass, the engine's trial run refuses it.
    int embedding = 448 * 64 * 4;
    Http.Response wrongTensors = upload(
        modelsKey,
        with(
            "file",
            safetensors(
                "{\"embed\":{\"dtype\":\"F32\"," + "\"shape\":[448,64],\"data_offsets\":[0,"
                    + embedding + "]}}",
                embedding)));
    assertBad(wrongTensors, 400, "file");
    assertThat(wrongTensors.json().get("error").get("code").asText()).isEqualTo("invalid_model");
    assertThat(wrongTensors.text()).doesNotContain(models.toString());
    // A body cut off before its closing boundary.
    byte[] whole = form("bad", "llama").bytes();
    assertBad(
        server
            .http
            .post("/v1/models")
            .bearer(modelsKey)
            .bytes(form("bad", "llama").contentType(), Arrays.copyOf(whole, whole.length - 40))
            .send(),
        400,
        null);

    assertThat(models.resolve(".uploads").resolve(orgId).resolve("bad")).doesNotExist();
    assertNoStagingLeft();
    assertThat(server
            .http
            .get("/v1/models")
            .bearer(modelsKey)
            .send()
            .json()
            .get("data")
            .findValuesAsText("id"))
        .doesNotContain("bad");
  }

  @Test
  void aDeclaredSizeOverMaxModelSizeIsRefusedBeforeTheBodyIsRead() throws IOException {
    try (Socket socket = new Socket("127.0.0.1", server.engram.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + modelsKey
              + "\r\nContent-Type: multipart/form-data; boundary=abc\r\nContent-Length: 2000000001\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String status = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(status).isEqualTo("HTTP/1.1 413");
    }
  }

  @Test
  void aClientThatWaitsFor100ContinueIsRefusedWithoutSendingTheBody() throws IOException {
    String inferenceOnly = server.apiKey(orgId, 1000, "inference");
    try (Socket socket = new Socket("127.0.0.1", server.engram.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + inferenceOnly
                  + "\r\nContent-Type: multipart/form-data; boundary=abc\r\nContent-Length: 50000000\r\n"
                  + "Expect: 100-continue\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String status = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertThat(status).isEqualTo("HTTP/1.1 403");
    }
  }

  @Test
  void aModelPutOnTheSharedDirectoryByAnotherNodeIsFoundWhenAskedFor() throws IOException {
    Path dir = models.resolve(".uploads").resolve(orgId).resolve("from-node-b");
    Files.createDirectories(dir);
    Files.write(dir.resolve("model.safetensors"), tiny.get("file"));
    Files.write(dir.resolve("config.json"), tiny.get("config"));
    Files.write(dir.resolve("tokenizer.json"), tiny.get("tokenizer"));
    Files.write(dir.resolve("tokenizer_config.json"), tiny.get("tokenizer_config"));
    assertThat(chat(modelsKey, "from-node-b").status()).isEqualTo(200);
    assertThat(
            server.http.get("/v1/models/from-node-b").bearer(otherOrgKey).send().status())
        .isEqualTo(404);
  }

  @Test
  void atStartOnlyStagingAbandonedForAnHourIsRemoved() throws IOException {
    Path cache = Files.createTempDirectory("engram-staging");
    Path abandoned = Files.createDirectories(cache.resolve(".staging/upload-old"));
    Files.writeString(abandoned.resolve("model.safetensors"), "half");
    java.nio.file.attribute.FileTime twoHoursAgo = java.nio.file.attribute.FileTime.from(
        java.time.Instant.now().minus(java.time.Duration.ofHours(2)));
    Files.setLastModifiedTime(abandoned.resolve("model.safetensors"), twoHoursAgo);
    Files.setLastModifiedTime(abandoned, twoHoursAgo);
    // Another node sharing the directory is receiving this one now.
    Path receiving = Files.createDirectories(cache.resolve(".staging/upload-new"));
    Files.writeString(receiving.resolve("model.safetensors"), "arriving");

    new ModelUploads(cache, dir -> null, id -> false).close();

    assertThat(abandoned).doesNotExist();
    assertThat(receiving.resolve("model.safetensors")).exists();
  }

  private static MultipartForm with(String part, byte[] replacement) {
    MultipartForm form = new MultipartForm().field("model_id", "bad").field("model_type", "llama");
    tiny.forEach((name, bytes) -> form.file(name, name, name.equals(part) ? replacement : bytes));
    return form;
  }

  private static byte[] safetensors(String header, int dataBytes) {
    byte[] json = header.getBytes(StandardCharsets.UTF_8);
    ByteBuffer file =
        ByteBuffer.allocate(8 + json.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
    file.putLong(json.length).put(json);
    return file.array();
  }

  private static void assertBad(Http.Response response, int status, String param) {
    assertThat(response.status()).as(response.text()).isEqualTo(status);
    JsonNode error = response.json().get("error");
    assertThat(error.get("message").asText()).isNotBlank();
    if (param != null) {
      assertThat(error.get("param").asText()).as(response.text()).isEqualTo(param);
    }
  }

  private static void assertNoStagingLeft() {
    Path staging = models.resolve(".staging");
    if (Files.isDirectory(staging)) {
      try (Stream<Path> left = Files.list(staging)) {
        assertThat(left.toList()).isEmpty();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }
}
