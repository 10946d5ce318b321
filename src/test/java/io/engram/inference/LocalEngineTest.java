package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.local.LocalEngine;
import io.engram.inference.local.TinyModel;
import io.engram.support.Http;
import io.engram.support.TestServer;
import io.engram.support.WebSocketClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The in-process jlama engine on the project's own tiny untrained model: real loading, real generation. */
class LocalEngineTest {
  static TestServer server;
  static String orgId;
  static String token;
  static String key;

  /** The demo model's weights (seed 42), whose greedy reply to "hi" never draws an end token. */
  static final String GREEDY_TO_THE_END = "tiny-greedy";

  @BeforeAll
  static void start() throws IOException {
    Path models = Files.createTempDirectory("engram-models");
    TinyModel.write(models, 7);
    TinyModel.write(models, GREEDY_TO_THE_END, 42, TinyModel.Shape.DEFAULT);
    server = TestServer.builder()
        .env("MODEL_CACHE_DIR", models.toString())
        .env("DEFAULT_MODEL", TinyModel.ID)
        .env("WORKER_PROCESSES", "1")
        .start();
    orgId = server.createOrganization("seed");
    token = server.token(orgId, null, "inference:chat", "memory:write");
    key = server.apiKey(orgId, 1000, "inference");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static String chat(String content, String extra) {
    return "{\"model\":\"" + TinyModel.ID + "\",\"messages\":[{\"role\":\"user\",\"content\":\""
        + content + "\"}]" + (extra.isEmpty() ? "" : "," + extra) + "}";
  }

  private static Http.Response send(String json) {
    return server.http.post("/v1/chat/completions").bearer(token).json(json).send();
  }

  @Test
  void theGeneratedModelIsListedWithItsContextAndParameterCount() {
    Http.Response models = server.http.get("/v1/models").bearer(key).send();
    JsonNode tiny = null;
    for (JsonNode model : models.json().get("data")) {
      if (model.get("id").asText().equals(TinyModel.ID)) {
        tiny = model;
      }
    }
    assertThat(tiny).as(models.text()).isNotNull();
    assertThat(tiny.get("context_length").asInt()).isEqualTo(2048);
    assertThat(tiny.get("parameters").asText()).endsWith("K");
    Http.Response forToken = server.http.get("/v1/models").bearer(token).send();
    assertThat(forToken.json().get("data").get(0).get("id").asText()).isEqualTo(TinyModel.ID);
  }

  @Test
  void generatesWithTheChatTemplateAndCountsExactTokens() {
    Http.Response response =
        send(chat("Hello there", "\"max_tokens\":12,\"temperature\":0.8,\"memory\":false"));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode reply = response.json();
    assertThat(reply.get("model").asText()).isEqualTo(TinyModel.ID);
    JsonNode usage = reply.get("usage");
    assertThat(usage.get("prompt_tokens").asInt()).isGreaterThan(5);
    assertThat(usage.get("completion_tokens").asInt()).isBetween(1, 12);
    String finish = reply.get("choices").get(0).get("finish_reason").asText();
    assertThat(finish).isIn("stop", "length");
    if (finish.equals("length")) {
      assertThat(usage.get("completion_tokens").asInt()).isEqualTo(12);
    }
  }

  @Test
  void toolsAndJsonSchemasAreRefusedByNameOnTheLocalEngine() {
    Http.Response tools =
        send(chat("Hi", "\"tools\":[{\"type\":\"function\",\"function\":" + "{\"name\":\"f\"}}]"));
    assertThat(tools.status()).isEqualTo(400);
    assertThat(tools.json().at("/error/code").asText()).isEqualTo("unsupported_parameter");
    assertThat(tools.json().at("/error/param").asText()).isEqualTo("tools");
    assertThat(tools.json().at("/error/message").asText()).contains("in-process engine");
    Http.Response schema = send(chat(
        "Hi", "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}"));
    assertThat(schema.status()).isEqualTo(400);
    assertThat(schema.json().at("/error/param").asText()).isEqualTo("response_format");
    assertThat(send(chat("Hi", "\"response_format\":{\"type\":\"text\"},\"max_tokens\":4"))
            .status())
        .isEqualTo(200);
  }

  /**
   * JSON mode by constrained decoding: an untrained model's noise, narrowed token by token, is
   * still one JSON object, closed within the budget, whole and streamed, whatever the seed.
   */
  @Test
  void jsonModeAlwaysGivesOneJsonObject() {
    for (int seed = 1; seed <= 12; seed++) {
      int maxTokens = 6 + seed * 4;
      Http.Response reply = send(chat(
          "Hi",
          "\"response_format\":{\"type\":\"json_object\"},\"memory\":false,\"max_tokens\":"
              + maxTokens + ",\"seed\":" + seed + ",\"temperature\":1.5"));
      assertThat(reply.status()).as(reply.text()).isEqualTo(200);
      String content = reply.json().at("/choices/0/message/content").asText();
      JsonNode parsed = io.engram.platform.json.Json.read(content, JsonNode.class);
      assertThat(parsed.isObject()).as(content).isTrue();
      assertThat(reply.json().at("/choices/0/finish_reason").asText())
          .as(content)
          .isEqualTo("stop");
      assertThat(reply.json().at("/usage/completion_tokens").asInt())
          .isLessThanOrEqualTo(maxTokens);
    }
    Http.Response streamed = send(chat(
        "Hi",
        "\"response_format\":{\"type\":\"json_object\"},\"memory\":false,\"max_tokens\":24,"
            + "\"seed\":5,\"stream\":true"));
    StringBuilder text = new StringBuilder();
    for (String event : GatewayFixture.events(streamed.text())) {
      if (!event.equals("[DONE]")) {
        text.append(io.engram.platform.json.Json.read(event, JsonNode.class)
            .at("/choices/0/delta/content")
            .asText(""));
      }
    }
    assertThat(
            io.engram.platform.json.Json.read(text.toString(), JsonNode.class).isObject())
        .as(text.toString())
        .isTrue();
    // A budget that cannot hold "{}" is cut, as OpenAI's JSON mode is.
    Http.Response cut = send(chat(
        "Hi", "\"response_format\":{\"type\":\"json_object\"},\"memory\":false,\"max_tokens\":1"));
    assertThat(cut.json().at("/choices/0/finish_reason").asText()).isEqualTo("length");
  }

  @Test
  void severalChoicesLogprobsAndLogitBiasAreRefusedByNameOnTheLocalEngine() {
    String[][] cases = {
      {"\"n\":2", "n"},
      {"\"logprobs\":true,\"top_logprobs\":2", "logprobs"},
      {"\"logit_bias\":{\"42\":-100}", "logit_bias"},
      {"\"reasoning_effort\":\"low\"", "reasoning_effort"},
    };
    for (String[] asked : cases) {
      Http.Response refused = send(chat("Hi", asked[0]));
      assertThat(refused.status()).as(asked[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("unsupported_parameter");
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(asked[1]);
    }
    // The in-process model reads no image: the message's parts are refused by name.
    Http.Response image =
        send("{\"model\":\"" + TinyModel.ID + "\",\"messages\":[{\"role\":\"user\","
            + "\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},{\"type\":\"image_url\","
            + "\"image_url\":{\"url\":\"data:image/png;base64,AA==\"}}]}]}");
    assertThat(image.status()).isEqualTo(400);
    assertThat(image.json().at("/error/param").asText()).isEqualTo("messages[0].content");
    // Their defaults ask nothing and are taken.
    assertThat(send(chat("Hi", "\"n\":1,\"logprobs\":false,\"logit_bias\":{},\"max_tokens\":4"))
            .status())
        .isEqualTo(200);
  }

  @Test
  void theWebSocketHonoursStreamFalseOnTheLocalEngine() throws Exception {
    try (WebSocketClient client = new WebSocketClient(server.engram.port(), "/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + token + "\"}");
      assertThat(client.next().get("type").asText()).isEqualTo("auth_ok");
      String ask = chat("Hello there", "\"max_tokens\":12,\"memory\":false,\"seed\":3");
      client.send(ask.replaceFirst("\\{", "{\"type\":\"inference\",\"stream\":false,"));
      List<JsonNode> whole = client.until(f -> f.path("type").asText().equals("done"));
      assertThat(whole).hasSize(2); // the whole text in one token frame, then done
      client.send(ask.replaceFirst("\\{", "{\"type\":\"inference\",\"stream\":true,"));
      List<JsonNode> streamed = client.until(f -> f.path("type").asText().equals("done"));
      assertThat(streamed.size()).isGreaterThan(2);
      assertThat(streamed.subList(0, streamed.size() - 1).stream()
              .map(f -> f.get("content").asText())
              .collect(java.util.stream.Collectors.joining()))
          .isEqualTo(whole.getFirst().get("content").asText());
    }
  }

  /**
   * Greedy decoding of the untrained model never draws an end token: the reply runs to the end of
   * the context and stops there, as "length", with a null cap on either route read as no cap.
   */
  @Test
  void aReplyThatRunsToTheEndOfTheContextStopsThere() {
    Http.Response completion = server
        .http
        .post("/v1/completions")
        .bearer(key)
        .json("{\"model\":\"" + GREEDY_TO_THE_END + "\",\"prompt\":\"hi\",\"temperature\":0,"
            + "\"max_tokens\":null}")
        .send();
    assertThat(completion.status()).as(completion.text()).isEqualTo(200);
    assertThat(completion.json().at("/choices/0/finish_reason").asText()).isEqualTo("length");
    JsonNode usage = completion.json().get("usage");
    assertThat(usage.get("total_tokens").asInt()).isLessThanOrEqualTo(2048);
    // A context token calls the default model only: the second model is the API key's.
    Http.Response chat = server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json(chat("hi", "\"temperature\":0,\"max_completion_tokens\":null")
            .replace(TinyModel.ID, GREEDY_TO_THE_END))
        .send();
    assertThat(chat.status()).as(chat.text()).isEqualTo(200);
    assertThat(chat.json().at("/choices/0/finish_reason").asText()).isEqualTo("length");
  }

  @Test
  void aSeedMakesTheOutputRepeatableAndTemperatureZeroIsGreedy() {
    String seeded =
        chat("Tell me about the office", "\"max_tokens\":16,\"seed\":99,\"memory\":false");
    String first =
        send(seeded).json().get("choices").get(0).get("message").get("content").asText();
    String second =
        send(seeded).json().get("choices").get(0).get("message").get("content").asText();
    assertThat(second).isEqualTo(first);
    String greedy =
        chat("Tell me about the office", "\"max_tokens\":16,\"temperature\":0,\"memory\":false");
    assertThat(send(greedy)
            .json()
            .get("choices")
            .get(0)
            .get("message")
            .get("content")
            .asText())
        .isEqualTo(send(greedy)
            .json()
            .get("choices")
            .get(0)
            .get("message")
            .get("content")
            .asText());
  }

  @Test
  void streamsTokensAsTheyAreProduced() {
    Http.Response response = send(chat(
        "Stream please",
        "\"max_tokens\":10,\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"memory\":false,\"seed\":3"));
    assertThat(response.status()).isEqualTo(200);
    List<JsonNode> chunks = GatewayFixture.chunks(response.text());
    assertThat(GatewayFixture.events(response.text()).getLast()).isEqualTo("[DONE]");
    assertThat(chunks.getFirst().get("choices").get(0).get("delta").get("role").asText())
        .isEqualTo("assistant");
    JsonNode usage = chunks.getLast().get("usage");
    List<JsonNode> content = chunks.stream()
        .filter(c ->
            !c.get("choices").isEmpty() && c.get("choices").get(0).get("delta").has("content"))
        .toList();
    String text = content.stream()
        .map(c -> c.get("choices").get(0).get("delta").get("content").asText())
        .collect(Collectors.joining());
    assertThat(content.size())
        .isLessThanOrEqualTo(usage.get("completion_tokens").asInt() + 1);
    String whole = send(chat("Stream please", "\"max_tokens\":10,\"memory\":false,\"seed\":3"))
        .json()
        .get("choices")
        .get(0)
        .get("message")
        .get("content")
        .asText();
    assertThat(text).isEqualTo(whole);
  }

  @Test
  void memoryGoesIntoTheLocalPromptToo() {
    Http.Response encoded = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .json("{\"text\":\"The data team meets on Thursday mornings.\"}")
        .send();
    assertThat(encoded.status()).isEqualTo(201);
    Http.Response with = send(chat("When does the data team meet?", "\"max_tokens\":2"));
    Http.Response without =
        send(chat("When does the data team meet?", "\"max_tokens\":2,\"memory\":false"));
    assertThat(with.header("X-Engram-Memory-Ids"))
        .contains(encoded.json().get("id").asText());
    assertThat(with.json().get("usage").get("prompt_tokens").asInt())
        .isGreaterThan(without.json().get("usage").get("prompt_tokens").asInt() + 10);
  }

  @Test
  void concurrencyIsBoundedAndRequestsQueueRatherThanFail() {
    List<CompletableFuture<Http.Response>> calls = List.of(1, 2, 3).stream()
        .map(i -> CompletableFuture.supplyAsync(() -> send(
            chat("Request " + i, "\"max_tokens\":200,\"memory\":false,\"stop\":[\"</never>\"]"))))
        .toList();
    calls.forEach(call -> assertThat(call.join().status()).isEqualTo(200));
    LocalEngine engine = server.localEngine(TinyModel.ID);
    assertThat(engine.peakRunning()).as("WORKER_PROCESSES=1").isEqualTo(1);
  }

  @Test
  void aClientThatLeavesStopsTheGeneration() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<InputStream> response = client.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + server.engram.port() + "/v1/chat/completions"))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(chat(
                "Go on",
                "\"max_tokens\":1900,\"stream\":true,"
                    + "\"memory\":false,\"stop\":[\"</never>\"]")))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream body = response.body()) {
      assertThat(new String(body.readNBytes(200))).startsWith("data: ");
    }
    client.close();
    StreamingTest.awaitUntil(
        () -> server.engram.inference().gateway().limits().inFlight(orgId) == 0);
    // It ended because the client left, not because it ran to its 1,900 tokens.
    assertThat(server.asOperator(server.http.get("/metrics")).text())
        .contains("engram_inference_generation_seconds_count{model=\"" + TinyModel.ID
            + "\",outcome=\"client_gone\"}");
  }

  @Test
  void textCompletionsUseTheRawPrompt() {
    Http.Response response = server
        .http
        .post("/v1/completions")
        .bearer(key)
        .json(
            "{\"model\":\"" + TinyModel.ID + "\",\"prompt\":\"Once upon a time\",\"max_tokens\":5}")
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(response.json().get("usage").get("prompt_tokens").asInt()).isBetween(3, 20);
  }
}
