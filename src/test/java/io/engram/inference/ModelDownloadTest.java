package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.engram.inference.local.TinyModel;
import io.engram.platform.config.ConfigException;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * MODEL_AUTO_DOWNLOAD against a fake Hugging Face Hub that follows the Hub's file API
 * ({@code /{owner}/{name}/resolve/main/{file}}, a redirect to its CDN for weights, 401 for a gated
 * model without a token): the server's DEFAULT_MODEL is fetched at start, served in-process,
 * fetched once, and never half.
 */
class ModelDownloadTest {
  private static final String TOKEN = "hf_test_token_0123456789";
  static HttpServer hub;
  static Path files;
  static final List<String> asked = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void startHub() throws IOException {
    files = Files.createTempDirectory("engram-hub");
    Path tiny = TinyModel.write(files, 17);
    // acme/tiny-chat: one weights file. acme/sharded: the same weights named by an index.
    // acme/gated: only with the token.
    hub = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    hub.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      String auth = exchange.getRequestHeaders().getFirst("Authorization");
      asked.add(path + (auth == null ? "" : " " + auth));
      if (path.startsWith("/cdn/")) {
        send(exchange, 200, Files.readAllBytes(tiny.resolve("model.safetensors")));
        return;
      }
      String[] parts = path.split("/", 6); // "", owner, name, "resolve", "main", file
      if (parts.length != 6 || !parts[3].equals("resolve") || !parts[4].equals("main")) {
        send(exchange, 404, new byte[0]);
        return;
      }
      String repo = parts[1] + "/" + parts[2];
      String file = parts[5];
      if (!List.of("acme/tiny-chat", "acme/sharded", "acme/gated").contains(repo)
          || (repo.equals("acme/sharded") && file.equals("model.safetensors"))) {
        send(exchange, 404, "{\"error\":\"Repository or entry not found\"}".getBytes());
        return;
      }
      if (repo.equals("acme/gated") && !("Bearer " + TOKEN).equals(auth)) {
        send(exchange, 401, "{\"error\":\"Access to model acme/gated is restricted\"}".getBytes());
        return;
      }
      if (file.equals("model.safetensors") && !repo.equals("acme/sharded")) {
        exchange.getResponseHeaders().add("Location", "/cdn/" + repo + "/weights");
        send(exchange, 302, new byte[0]);
        return;
      }
      if (repo.equals("acme/sharded") && file.equals("model.safetensors.index.json")) {
        ObjectNode index = Json.MAPPER.createObjectNode();
        index
            .putObject("metadata")
            .put("total_size", Files.size(tiny.resolve("model.safetensors")));
        ObjectNode map = index.putObject("weight_map");
        TinyModel.tensors(1, TinyModel.Shape.DEFAULT)
            .keySet()
            .forEach(name -> map.put(name, "model-00001-of-00001.safetensors"));
        send(exchange, 200, Json.write(index).getBytes());
        return;
      }
      Path served = file.equals("model-00001-of-00001.safetensors")
          ? tiny.resolve("model.safetensors")
          : tiny.resolve(file);
      if (!Files.isRegularFile(served) || file.contains("..")) {
        send(exchange, 404, "{\"error\":\"Entry not found\"}".getBytes());
        return;
      }
      send(exchange, 200, Files.readAllBytes(served));
    });
    hub.start();
  }

  private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  @AfterAll
  static void stopHub() {
    hub.stop(0);
  }

  private static String endpoint() {
    return "http://127.0.0.1:" + hub.getAddress().getPort();
  }

  private static TestServer serve(Path models, String model, String... env) {
    TestServer.Builder builder = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("DEFAULT_MODEL", model)
        .env("HF_ENDPOINT", endpoint())
        .env("WORKER_PROCESSES", "1");
    for (int i = 0; i < env.length; i += 2) {
      builder.env(env[i], env[i + 1]);
    }
    return builder.start();
  }

  private static Http.Response chat(TestServer server) {
    String org = server.createOrganization("seed");
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(server.token(org, null, "inference:chat"))
        .json("{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":3,"
            + "\"memory\":false}")
        .send();
  }

  @Test
  void theDefaultModelIsFetchedOnceWithTheTokenAndServedInProcess() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    asked.clear();
    try (TestServer server = serve(models, "acme/tiny-chat", "HF_TOKEN", TOKEN)) {
      Http.Response answer = chat(server);
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
      assertThat(answer.json().get("model").asText()).isEqualTo("acme/tiny-chat");
    }
    assertThat(asked)
        .contains(
            "/acme/tiny-chat/resolve/main/config.json Bearer " + TOKEN,
            "/acme/tiny-chat/resolve/main/tokenizer.json Bearer " + TOKEN,
            "/acme/tiny-chat/resolve/main/model.safetensors Bearer " + TOKEN)
        .anyMatch(line -> line.startsWith("/cdn/acme/tiny-chat/weights"));
    assertThat(models.resolve("acme/tiny-chat/model.safetensors")).isRegularFile();
    // Started again on the same directory: served from disk, nothing fetched.
    asked.clear();
    try (TestServer server = serve(models, "acme/tiny-chat", "HF_TOKEN", TOKEN)) {
      assertThat(chat(server).status()).isEqualTo(200);
    }
    assertThat(asked).isEmpty();
  }

  @Test
  void aModelInSeveralFilesIsFetchedByItsIndex() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    try (TestServer server = serve(models, "acme/sharded")) {
      Http.Response answer = chat(server);
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    }
    assertThat(models.resolve("acme/sharded/model-00001-of-00001.safetensors")).isRegularFile();
  }

  @Test
  void withDownloadsOffNothingIsFetchedAndTheModelIsNotServed() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    asked.clear();
    try (TestServer server = serve(models, "acme/tiny-chat", "MODEL_AUTO_DOWNLOAD", "false")) {
      Http.Response answer = chat(server);
      assertThat(answer.status()).as(answer.text()).isEqualTo(404);
    }
    assertThat(asked).isEmpty();
    assertThat(models.resolve("acme")).doesNotExist();
  }

  @Test
  void aGatedModelWithoutATokenStopsTheStartSayingSoAndLeavesNothingHalf() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    assertThatThrownBy(() -> serve(models, "acme/gated").close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("HF_TOKEN")
        .hasMessageContaining("acme/gated")
        .hasMessageContaining("MODEL_AUTO_DOWNLOAD");
    assertThat(models.resolve("acme/gated")).doesNotExist();
    try (Stream<Path> left = Files.walk(models.resolve(".downloads"))) {
      assertThat(left.filter(Files::isRegularFile)).isEmpty();
    }
    // A directory in the way that is not a whole model: named, not overwritten.
    Files.createDirectories(models.resolve("acme/broken"));
    Files.writeString(models.resolve("acme/broken/config.json"), "{}");
    assertThatThrownBy(() -> serve(models, "acme/broken").close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("is not a whole model");
    assertThat(models.resolve("acme/broken/config.json")).hasContent("{}");
    // A repository the Hub does not have: the start says which.
    assertThatThrownBy(() -> serve(models, "acme/missing").close())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("404");
  }
}
