package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeAnthropic;
import io.engram.support.FakeGemini;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * OpenAI's chat in front of Anthropic's and Gemini's own APIs, through real HTTP: fakes that hold
 * each request to its API's reference (any drift is a 400 the test sees), and the answers back in
 * OpenAI's shapes, whole and streamed, text and tool calls.
 */
class NativeProvidersTest {
  static final String TOOLS = """
      ,"tools":[{"type":"function","function":{"name":"weather","description":"Weather in a city",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]""";

  static FakeAnthropic anthropic;
  static FakeGemini gemini;
  static TestServer server;
  static String org;
  static String admin;
  static String key;

  @BeforeAll
  static void start() {
    anthropic = new FakeAnthropic("anthropic-key");
    gemini = new FakeGemini("gemini-key");
    server = TestServer.start();
    org = server.createOrganization("seed");
    admin = server.apiKey(org, 1000, "admin");
    key = server.apiKey(org, 1000, "inference");
    String claude = provider("claude", "anthropic", anthropic.baseUrl(), "anthropic-key");
    String google = provider("google", "gemini", gemini.baseUrl(), "gemini-key");
    model("claude-chat", claude, "claude-test", null);
    model("gemini-chat", google, "gemini-test", null);
    model("claude-then-gemini", claude, "claude-test", google);
    Http.Response both = post("/models", """
        {"id":"vision-claude-then-gemini","capabilities":{"vision":true},"deployments":[
         {"provider_id":"%s","model":"claude-test"},
         {"provider_id":"%s","model":"gemini-test","priority":1}]}""".formatted(claude, google));
    assertThat(both.status()).as(both.text()).isEqualTo(201);
    for (String[] vision : new String[][] {
      {"claude-vision", claude, "claude-test"}, {"gemini-vision", google, "gemini-test"}
    }) {
      Http.Response created = post(
          "/models",
          "{\"id\":\"" + vision[0] + "\",\"capabilities\":"
              + "{\"vision\":true},\"deployments\":[{\"provider_id\":\"" + vision[1]
              + "\",\"model\":\"" + vision[2] + "\"}]}");
      assertThat(created.status()).as(created.text()).isEqualTo(201);
    }
  }

  @AfterAll
  static void stop() {
    server.close();
    anthropic.close();
    gemini.close();
  }

  @AfterEach
  void normal() {
    anthropic.normal();
    gemini.normal();
    assertThat(anthropic.refusals()).as("requests Anthropic's API would refuse").isEmpty();
    assertThat(gemini.refusals()).as("requests Gemini's API would refuse").isEmpty();
  }

  private static Http.Response post(String path, String body) {
    return server
        .http
        .post("/v1/organizations/" + org + path)
        .bearer(admin)
        .json(body)
        .send();
  }

  private static String provider(String name, String kind, String url, String apiKey) {
    Http.Response created = post("/providers", """
        {"name":"%s","kind":"%s","base_url":"%s","api_key":"%s"}""".formatted(name, kind, url, apiKey));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().path("id").asText();
  }

  private static void model(String id, String provider, String name, String fallback) {
    String deployments = "{\"provider_id\":\"" + provider + "\",\"model\":\"" + name + "\"}"
        + (fallback == null
            ? ""
            : ",{\"provider_id\":\"" + fallback + "\",\"model\":\"gemini-test\",\"priority\":1}");
    Http.Response created =
        post("/models", "{\"id\":\"" + id + "\",\"deployments\":[" + deployments + "]}");
    assertThat(created.status()).as(created.text()).isEqualTo(201);
  }

  private static Http.Response chat(String model, String messages, String extra) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json(
            "{\"model\":\"" + model + "\",\"memory\":false,\"messages\":" + messages + extra + "}")
        .send();
  }

  private static final String ASK = """
      [{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Lyon?"}]""";

  /** The data payloads of an SSE answer, [DONE] excluded. */
  private static List<JsonNode> chunks(Http.Response stream) {
    return io.engram.support.Sse.chunks(stream.text());
  }

  private static String streamedText(Http.Response stream) {
    StringBuilder text = new StringBuilder();
    chunks(stream)
        .forEach(c ->
            text.append(c.path("choices").path(0).path("delta").path("content").asText("")));
    return text.toString();
  }

  @Test
  void anthropicAnswersAWholeChat() {
    Http.Response answer = chat("claude-chat", ASK, ",\"max_tokens\":64,\"temperature\":0.5");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from Claude.");
    assertThat(answer.json().at("/choices/0/finish_reason").asText()).isEqualTo("stop");
    assertThat(answer.json().at("/usage/completion_tokens").asInt()).isEqualTo(4);
    JsonNode sent = anthropic.lastRequest();
    assertThat(sent.path("system").asText()).isEqualTo("Be brief.");
    assertThat(sent.path("model").asText()).isEqualTo("claude-test");
    assertThat(sent.path("max_tokens").asInt()).isEqualTo(64);
    assertThat(sent.path("temperature").asDouble()).isEqualTo(0.5);
    assertThat(sent.path("messages").get(0).path("role").asText()).isEqualTo("user");
  }

  @Test
  void anthropicStreamsInOpenAisChunks() {
    Http.Response stream = chat("claude-chat", ASK, ",\"stream\":true");
    assertThat(stream.status()).isEqualTo(200);
    assertThat(streamedText(stream)).isEqualTo("Hello from Claude.");
    assertThat(stream.text()).contains("data: [DONE]");
    assertThat(anthropic.lastRequest().path("stream").asBoolean()).isTrue();
  }

  @Test
  void anthropicToolCallsComeBackInOpenAisShapeWholeAndStreamed() {
    Http.Response whole = chat("claude-chat", ASK, TOOLS);
    assertThat(whole.status()).as(whole.text()).isEqualTo(200);
    JsonNode call = whole.json().at("/choices/0/message/tool_calls/0");
    assertThat(call.path("id").asText()).isEqualTo("toolu_01");
    assertThat(call.at("/function/name").asText()).isEqualTo("weather");
    assertThat(Json.read(call.at("/function/arguments").asText(), JsonNode.class)
            .path("city")
            .asText())
        .isEqualTo("Lyon");
    assertThat(whole.json().at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(anthropic.lastRequest().at("/tools/0/input_schema/type").asText())
        .isEqualTo("object");

    Http.Response streamed = chat("claude-chat", ASK, TOOLS + ",\"stream\":true");
    StringBuilder arguments = new StringBuilder();
    String name = null;
    for (JsonNode chunk : chunks(streamed)) {
      JsonNode delta = chunk.at("/choices/0/delta/tool_calls/0");
      if (!delta.isMissingNode()) {
        name =
            delta.at("/function/name").isTextual() ? delta.at("/function/name").asText() : name;
        arguments.append(delta.at("/function/arguments").asText(""));
      }
    }
    assertThat(name).isEqualTo("weather");
    assertThat(Json.read(arguments.toString(), JsonNode.class).path("city").asText())
        .isEqualTo("Lyon");

    String answered = """
        [{"role":"user","content":"Weather in Lyon?"},
         {"role":"assistant","content":null,"tool_calls":[{"id":"toolu_01","type":"function",
           "function":{"name":"weather","arguments":"{\\"city\\":\\"Lyon\\"}"}}]},
         {"role":"tool","tool_call_id":"toolu_01","content":"Sunny, 21 C"}]""";
    Http.Response after = chat("claude-chat", answered, TOOLS);
    assertThat(after.status()).as(after.text()).isEqualTo(200);
    assertThat(after.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from Claude.");
    JsonNode turns = anthropic.lastRequest().path("messages");
    assertThat(turns.get(1).at("/content/0/type").asText()).isEqualTo("tool_use");
    assertThat(turns.get(1).at("/content/0/input/city").asText()).isEqualTo("Lyon");
    assertThat(turns.get(2).at("/content/0/type").asText()).isEqualTo("tool_result");
    assertThat(turns.get(2).at("/content/0/tool_use_id").asText()).isEqualTo("toolu_01");
  }

  @Test
  void whatAnthropicCannotHonourIsRefusedByNameUnlessTheOrganizationDropsIt() {
    for (String[] refused : new String[][] {
      {",\"logprobs\":true", "logprobs"},
      {",\"seed\":7", "seed"},
      {",\"temperature\":1.5", "temperature"},
      {",\"reasoning_effort\":\"low\"", "reasoning_effort"},
      {",\"response_format\":{\"type\":\"json_object\"}", "response_format"}
    }) {
      Http.Response answer = chat("claude-chat", ASK, refused[0]);
      assertThat(answer.status()).as(refused[0] + answer.text()).isEqualTo(400);
      assertThat(answer.json().at("/error/param").asText()).isEqualTo(refused[1]);
      assertThat(answer.json().at("/error/code").asText()).isEqualTo("unsupported_parameter");
    }
    droppingParameters(() -> {
      Http.Response answer = chat("claude-chat", ASK, ",\"seed\":7,\"temperature\":1.5");
      assertThat(answer.status()).as(answer.text()).isEqualTo(200);
      assertThat(anthropic.lastRequest().has("seed")).isFalse();
      assertThat(anthropic.lastRequest().has("temperature")).isFalse();
    });
  }

  /** Runs {@code chats} while the organization drops what a provider cannot carry. */
  private static void droppingParameters(Runnable chats) {
    Http.Response drop = post("/env", "{\"variables\":{\"DROP_PARAMS\":\"true\"}}");
    assertThat(drop.status()).as(drop.text()).isEqualTo(200);
    try {
      chats.run();
    } finally {
      server
          .http
          .delete("/v1/organizations/" + org + "/env/DROP_PARAMS")
          .bearer(admin)
          .send();
    }
  }

  /**
   * {@code POST /v1/messages/count_tokens}: Anthropic's or Gemini's own count where the model's
   * deployment is on them (the fakes' counts, which the gateway's tokenizer never gives), said in
   * X-Engram-Token-Count (the gateway's own count, for an OpenAI-compatible provider, is in
   * compat/anthropic-compat.test.mjs).
   */
  @Test
  void tokensAreCountedByTheProviderWhereItCountsElseByTheGateway() {
    String body = """
        {"model":"%s","system":"Be brief.","messages":[{"role":"user","content":"Weather in Lyon?"}],
         "tools":[{"name":"weather","input_schema":{"type":"object"}}]}""";
    Http.Response byAnthropic = countTokens(body.formatted("claude-chat"));
    assertThat(byAnthropic.status()).as(byAnthropic.text()).isEqualTo(200);
    assertThat(byAnthropic.header("X-Engram-Token-Count")).isEqualTo("provider");
    JsonNode asked = anthropic.lastRequest();
    assertThat(asked.has("max_tokens")).isFalse();
    assertThat(asked.path("system").asText()).isEqualTo("Be brief.");
    assertThat(byAnthropic.json().get("input_tokens").asInt())
        .isEqualTo(FakeAnthropic.countOf(asked));
    assertThat(byAnthropic.header("request-id")).startsWith("req_");

    Http.Response byGemini = countTokens(body.formatted("gemini-chat"));
    assertThat(byGemini.status()).as(byGemini.text()).isEqualTo(200);
    assertThat(byGemini.header("X-Engram-Token-Count")).isEqualTo("provider");
    JsonNode counted = gemini.lastRequest();
    assertThat(counted.at("/generateContentRequest/systemInstruction").isMissingNode())
        .isFalse();
    assertThat(byGemini.json().get("input_tokens").asInt()).isEqualTo(FakeGemini.countOf(counted));

    Http.Response generationField = countTokens(
        body.formatted("claude-chat").replace("\"system\"", "\"max_tokens\":5,\"system\""));
    assertThat(generationField.status()).isEqualTo(400);
    assertThat(generationField.json().at("/error/param").asText()).isEqualTo("max_tokens");
    Http.Response unknown = countTokens(body.formatted("no-such-model"));
    assertThat(unknown.status()).isEqualTo(404);
    assertThat(unknown.json().at("/error/type").asText()).isEqualTo("not_found_error");
  }

  private static Http.Response countTokens(String body) {
    return server
        .http
        .post("/v1/messages/count_tokens")
        .header("x-api-key", key)
        .json(body)
        .send();
  }

  @Test
  void geminiAnswersWholeAndStreamed() {
    Http.Response answer =
        chat("gemini-chat", ASK, ",\"max_tokens\":50,\"seed\":3,\"stop\":\"END\"");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from Gemini.");
    JsonNode sent = gemini.lastRequest();
    assertThat(sent.at("/systemInstruction/parts/0/text").asText()).isEqualTo("Be brief.");
    assertThat(sent.at("/generationConfig/maxOutputTokens").asInt()).isEqualTo(50);
    assertThat(sent.at("/generationConfig/seed").asInt()).isEqualTo(3);
    assertThat(sent.at("/generationConfig/stopSequences/0").asText()).isEqualTo("END");
    assertThat(sent.at("/contents/0/role").asText()).isEqualTo("user");

    Http.Response stream = chat("gemini-chat", ASK, ",\"stream\":true");
    assertThat(stream.status()).isEqualTo(200);
    assertThat(streamedText(stream)).isEqualTo("Hello from Gemini.");
  }

  @Test
  void geminiTakesToolsAndJsonOutput() {
    Http.Response call = chat("gemini-chat", ASK, TOOLS + ",\"tool_choice\":\"required\"");
    assertThat(call.status()).as(call.text()).isEqualTo(200);
    assertThat(call.json().at("/choices/0/message/tool_calls/0/function/name").asText())
        .isEqualTo("weather");
    assertThat(call.json().at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(gemini.lastRequest().at("/toolConfig/functionCallingConfig/mode").asText())
        .isEqualTo("ANY");
    String id = call.json().at("/choices/0/message/tool_calls/0/id").asText();
    String answered = """
        [{"role":"user","content":"Weather in Lyon?"},
         {"role":"assistant","content":null,"tool_calls":[{"id":"%s","type":"function",
           "function":{"name":"weather","arguments":"{\\"city\\":\\"Lyon\\"}"}}]},
         {"role":"tool","tool_call_id":"%s","content":"Sunny"}]""".formatted(id, id);
    Http.Response after = chat("gemini-chat", answered, TOOLS);
    assertThat(after.status()).as(after.text()).isEqualTo(200);
    assertThat(
            gemini.lastRequest().at("/contents/2/parts/0/functionResponse/name").asText())
        .isEqualTo("weather");

    Http.Response json =
        chat("gemini-chat", ASK, ",\"response_format\":{\"type\":\"json_object\"}");
    assertThat(json.status()).as(json.text()).isEqualTo(200);
    assertThat(gemini.lastRequest().at("/generationConfig/responseMimeType").asText())
        .isEqualTo("application/json");
    assertThat(Json.read(json.json().at("/choices/0/message/content").asText(), JsonNode.class)
            .path("greeting")
            .asText())
        .isEqualTo("hello");
  }

  static final String PICTURE = """
      [{"role":"user","content":[{"type":"text","text":"What is this?"},
        {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]""";

  /**
   * A routed model carries what one of its deployments can: each deployment is asked when its
   * turn comes, one that cannot carry the request is passed over for the next (a seed goes to
   * Gemini, not refused because Anthropic comes first), and when none can, the 400 names the part
   * and every deployment; with DROP_PARAMS the first deployment gets the request without it.
   */
  @Test
  void eachDeploymentIsAskedWhetherItCarriesTheRequestWhenItsTurnComes() {
    int toAnthropic = anthropic.requests().size();
    Http.Response seeded = chat("claude-then-gemini", ASK, ",\"seed\":7,\"temperature\":1.5");
    assertThat(seeded.status()).as(seeded.text()).isEqualTo(200);
    assertThat(anthropic.requests()).hasSize(toAnthropic);
    assertThat(gemini.lastRequest().at("/generationConfig/seed").asInt()).isEqualTo(7);
    assertThat(seeded.header("X-Engram-Attempts")).isEqualTo("1");

    Http.Response plain = chat("claude-then-gemini", ASK, ",\"temperature\":0.5");
    assertThat(plain.status()).as(plain.text()).isEqualTo(200);
    assertThat(anthropic.requests()).hasSize(toAnthropic + 1);

    // An image by URL only Anthropic reads, a seed only Gemini takes: neither can have both.
    String both =
        PICTURE.replace("data:image/png;base64,iVBORw0KGgo=", "https://images.example/cat.png");
    Http.Response none = chat("vision-claude-then-gemini", both, ",\"seed\":7");
    assertThat(none.status()).as(none.text()).isEqualTo(400);
    assertThat(none.json().at("/error/code").asText()).isEqualTo("unsupported_parameter");
    assertThat(none.json().at("/error/message").asText())
        .contains("cannot carry 'seed'")
        .contains("cannot carry 'messages[0].content'")
        .contains("on the provider 'claude'")
        .contains("on the provider 'google'");
    assertThat(anthropic.requests()).hasSize(toAnthropic + 1);
    droppingParameters(() -> {
      Http.Response dropped = chat("vision-claude-then-gemini", both, ",\"seed\":7");
      assertThat(dropped.status()).as(dropped.text()).isEqualTo(200);
      assertThat(anthropic.lastRequest().has("seed")).isFalse();
    });
  }

  @Test
  void imagesReachOnlyModelsDeclaredToReadThem() {
    Http.Response refused = chat("claude-chat", PICTURE, "");
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.json().at("/error/param").asText()).isEqualTo("messages[0].content");
    Http.Response claude = chat("claude-vision", PICTURE, "");
    assertThat(claude.status()).as(claude.text()).isEqualTo(200);
    JsonNode blocks = anthropic.lastRequest().at("/messages/0/content");
    assertThat(blocks.get(0).path("text").asText()).isEqualTo("What is this?");
    assertThat(blocks.get(1).at("/source/type").asText()).isEqualTo("base64");
    assertThat(blocks.get(1).at("/source/media_type").asText()).isEqualTo("image/png");
    Http.Response gemini = chat("gemini-vision", PICTURE, "");
    assertThat(gemini.status()).as(gemini.text()).isEqualTo(200);
    assertThat(NativeProvidersTest.gemini
            .lastRequest()
            .at("/contents/0/parts/1/inlineData/mimeType")
            .asText())
        .isEqualTo("image/png");
    // Gemini reads images sent inline only: a URL is refused by name, not dropped.
    Http.Response url = chat(
        "gemini-vision",
        PICTURE.replace("data:image/png;base64,iVBORw0KGgo=", "https://images.example/cat.png"),
        "");
    assertThat(url.status()).isEqualTo(400);
    assertThat(url.json().at("/error/param").asText()).isEqualTo("messages[0].content");
  }

  @Test
  void anOverloadedAnthropicFallsBackToGemini() {
    anthropic.failWith(529);
    Http.Response answer = chat("claude-then-gemini", ASK, "");
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(answer.json().at("/choices/0/message/content").asText())
        .isEqualTo("Hello from Gemini.");
    assertThat(answer.header("X-Engram-Attempts")).isEqualTo("2");
  }

  @Test
  void aWrongKeyIsAnOperatorProblem() {
    String wrong = provider("wrong", "gemini", gemini.baseUrl(), "not-the-key");
    model("wrong-key", wrong, "gemini-test", null);
    Http.Response answer = chat("wrong-key", ASK, "");
    assertThat(answer.status()).isEqualTo(502);
    assertThat(answer.json().at("/error/code").asText()).isEqualTo("upstream_misconfigured");
    Http.Response check = post("/providers/" + wrong + "/check", "{}");
    assertThat(check.json().path("ok").asBoolean()).isFalse();
    // An operator problem: tried once (another attempt cannot cure it), and an alert.
    assertThat(answer.header("X-Engram-Attempts")).isNull();
    assertThat(gemini.requests().stream()
            .filter(r -> r.path("contents").toString().contains("Weather in Lyon"))
            .count())
        .isPositive();
    Http.Response alerts = server
        .http
        .get("/v1/organizations/" + org + "/alerts?kind=provider_misconfigured")
        .bearer(admin)
        .send();
    assertThat(alerts.status()).as(alerts.text()).isEqualTo(200);
    assertThat(alerts.text()).contains("provider_misconfigured", "firing", "wrong");
  }

  @Test
  void bothProvidersCanBeChecked() {
    for (Http.Response provider : List.of(
        server.http.get("/v1/organizations/" + org + "/providers").bearer(admin).send())) {
      for (JsonNode p : provider.json().path("data")) {
        if (p.path("name").asText().equals("wrong")) {
          continue;
        }
        Http.Response check = post("/providers/" + p.path("id").asText() + "/check", "{}");
        assertThat(check.json().path("ok").asBoolean()).as(check.text()).isTrue();
        assertThat(check.json().path("models").toString())
            .containsAnyOf("claude-test", "gemini-test");
      }
    }
  }

  @Test
  void aCutStreamIsAnErrorEventNeverAReplay() {
    anthropic.cutAfter(4);
    int geminiBefore = gemini.requests().size();
    Http.Response stream = chat("claude-then-gemini", ASK, ",\"stream\":true");
    assertThat(stream.status()).isEqualTo(200);
    assertThat(stream.text()).contains("upstream_stream_cut");
    assertThat(gemini.requests()).hasSize(geminiBefore);
  }
}
