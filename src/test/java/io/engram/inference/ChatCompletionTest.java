package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Chat completions through a fake upstream: the response shape, the upstream call, memory injection. */
class ChatCompletionTest {
  @RegisterExtension
  static final GatewayFixture gateway = GatewayFixture.start();

  @Test
  void answersInOpenAisShapeAndCallsTheUpstreamWithItsOwnModelAndKey() {
    Http.Response response = gateway
        .chat(
            gateway.token,
            GatewayFixture.body(
                "Say hello",
                "\"temperature\":0.2,"
                    + "\"max_tokens\":50,\"stop\":[\"END\"],\"seed\":7,\"user\":\"u-1\",\"n\":1"))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode reply = response.json();
    assertThat(reply.get("id").asText()).startsWith("chatcmpl-");
    assertThat(reply.get("object").asText()).isEqualTo("chat.completion");
    assertThat(reply.get("model").asText()).isEqualTo(GatewayFixture.MODEL);
    assertThat(reply.get("created").asLong()).isPositive();
    JsonNode choice = reply.get("choices").get(0);
    assertThat(choice.get("index").asInt()).isZero();
    assertThat(choice.get("message").get("role").asText()).isEqualTo("assistant");
    assertThat(choice.get("message").get("content").asText()).isEqualTo("Hello from the upstream.");
    assertThat(choice.get("finish_reason").asText()).isEqualTo("stop");
    JsonNode usage = reply.get("usage");
    assertThat(usage.get("total_tokens").asInt())
        .isEqualTo(
            usage.get("prompt_tokens").asInt() + usage.get("completion_tokens").asInt());

    JsonNode sent = gateway.upstream.lastRequest();
    assertThat(sent.get("model").asText()).isEqualTo(GatewayFixture.UPSTREAM_MODEL);
    assertThat(sent.get("temperature").asDouble()).isEqualTo(0.2);
    assertThat(sent.get("max_tokens").asInt()).isEqualTo(50);
    assertThat(sent.get("stop").get(0).asText()).isEqualTo("END");
    assertThat(sent.get("seed").asLong()).isEqualTo(7);
    assertThat(sent.get("stream").asBoolean()).isFalse();
    assertThat(gateway.upstream.authorizations().getLast())
        .isEqualTo("Bearer " + GatewayFixture.UPSTREAM_KEY);
  }

  /**
   * The reply's limit the plan and the spec set is the one thing sent that the client did not:
   * no sampling default of ours overrides the upstream's own.
   */
  @Test
  void defaultsMaxTokensWithinThePlanAndTheSpec() {
    gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(gateway.upstream.lastRequest().get("max_tokens").asInt()).isEqualTo(2048);
    for (String unset :
        List.of("temperature", "top_p", "frequency_penalty", "presence_penalty", "stop", "seed")) {
      assertThat(gateway.upstream.lastRequest().has(unset)).as(unset).isFalse();
    }
  }

  /** Clients built on typed models send null for every unset parameter; OpenAI reads it as absent. */
  @Test
  void explicitNullsOnTheOpenAiRoutesMeanTheDefault() {
    Http.Response chat = gateway
        .chat(
            gateway.token,
            GatewayFixture.body(
                "Hi",
                "\"temperature\":null,\"top_p\":null,\"stop\":null,\"max_tokens\":null,\"user\":null,\"seed\":null"))
        .send();
    assertThat(chat.status()).as(chat.text()).isEqualTo(200);
    assertThat(gateway.upstream.lastRequest().has("temperature")).isFalse();
    assertThat(gateway.upstream.lastRequest().get("max_tokens").asInt()).isEqualTo(2048);
  }

  @Test
  void aConversationOfInvisibleTextIsAnsweredWithoutMemoryNotA500() {
    gateway.remember("The Berlin office opens at nine.", null);
    for (String content : List.of("\u200b", "\u00a0\ufeff\u0301", "\uDB40\uDC41 \u0001")) {
      Http.Response response =
          gateway.chat(gateway.token, GatewayFixture.body(content, "")).send();
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      assertThat(response.header("X-Engram-Memory-Ids")).isEmpty();
    }
  }

  @Test
  void putsRelevantMemoriesAheadOfTheMessagesAndSaysWhichAndCountsThem() {
    String id = gateway.remember("The Lisbon office moved to Rua Augusta 100 in March.", null);
    Http.Response response = gateway
        .chat(gateway.token, GatewayFixture.body("Where is the Lisbon office now?", ""))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(response.header("X-Engram-Memory-Ids")).contains(id);
    int memoryTokens = Integer.parseInt(response.header("X-Engram-Memory-Tokens"));
    assertThat(memoryTokens).isPositive();
    assertThat(response.json().get("usage").get("memory_tokens").asInt()).isEqualTo(memoryTokens);

    JsonNode messages = gateway.upstream.lastRequest().get("messages");
    assertThat(messages).hasSize(2);
    assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
    assertThat(messages.get(0).get("content").asText())
        .contains("<memory>")
        .contains("Rua Augusta 100");
    assertThat(messages.get(1).get("content").asText())
        .isEqualTo("Where is the Lisbon office now?");
    // The injected block is part of the prompt the engine counted.
    int withMemory = response.json().get("usage").get("prompt_tokens").asInt();
    Http.Response without = gateway
        .chat(
            gateway.token,
            GatewayFixture.body("Where is the Lisbon office now?", "\"memory\":false"))
        .send();
    assertThat(without.json().get("usage").get("prompt_tokens").asInt()).isLessThan(withMemory);
  }

  @Test
  void onlyAnAnswerThatDrewOnAMemoryRaisesItsActivation() {
    String id =
        gateway.remember("Quarterly reviews happen on the first Tuesday of the quarter.", null);
    JsonNode before = uses(id);
    try {
      // An answer that says nothing of the memory: counted as injected, activation unchanged.
      JsonNode injected = usesAfterAnswer(id, "I cannot say.");
      assertThat(injected.get("retrievals").asInt())
          .isEqualTo(before.get("retrievals").asInt() + 1);
      assertThat(injected.get("answers").asInt())
          .isEqualTo(before.get("answers").asInt());
      assertThat(injected.at("/activation/baseLevel").asDouble())
          .isLessThanOrEqualTo(before.at("/activation/baseLevel").asDouble());

      // An answer built on it: an answer use, and the memory's activation rises.
      JsonNode answered =
          usesAfterAnswer(id, "They happen on the first Tuesday", " of each quarter.");
      assertThat(answered.get("retrievals").asInt())
          .isEqualTo(before.get("retrievals").asInt() + 2);
      assertThat(answered.get("answers").asInt())
          .isEqualTo(before.get("answers").asInt() + 1);
      assertThat(answered.at("/recent").findValuesAsText("kind")).contains("answer");
      assertThat(answered.at("/activation/baseLevel").asDouble())
          .isGreaterThan(injected.at("/activation/baseLevel").asDouble());
    } finally {
      gateway.upstream.script(FakeUpstream.Script.NORMAL);
    }
  }

  /** The memory's uses after a chat about it that the model answers with {@code answer}. */
  private JsonNode usesAfterAnswer(String id, String... answer) {
    gateway.upstream.script(FakeUpstream.Script.NORMAL.pieces(answer));
    gateway
        .chat(gateway.token, GatewayFixture.body("When do quarterly reviews happen?", ""))
        .send();
    return uses(id);
  }

  private JsonNode uses(String id) {
    gateway.server.engram.memory().reads().flushUses();
    Http.Response provenance = gateway
        .server
        .http
        .get("/v1/memory/" + id + "/provenance")
        .bearer(gateway.token)
        .send();
    assertThat(provenance.status()).as(provenance.text()).isEqualTo(200);
    return provenance.json().get("uses");
  }

  @Test
  void memoryCanBeTurnedOffByBodyOrHeader() {
    gateway.remember("The staging database password rotates every Friday.", null);
    for (Http.Call call : List.of(
        gateway.chat(
            gateway.token,
            GatewayFixture.body("When does the staging password rotate?", "\"memory\":false")),
        gateway.chat(
            gateway.token,
            GatewayFixture.body(
                "When does the staging password rotate?", "\"memory\":{\"enabled\":false}")),
        gateway
            .chat(gateway.token, GatewayFixture.body("When does the staging password rotate?", ""))
            .header("X-Engram-Memory", "off"))) {
      Http.Response response = call.send();
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      assertThat(response.header("X-Engram-Memory-Ids")).isEmpty();
      JsonNode messages = gateway.upstream.lastRequest().get("messages");
      assertThat(messages).hasSize(1);
      assertThat(messages.get(0).get("role").asText()).isEqualTo("user");
    }
  }

  @Test
  void theModelsAreListedFromInsideAnAgentBoundaryToo() {
    String supportOnly = gateway.server.token(gateway.orgId, List.of("support"), "inference:chat");
    Http.Response inAgent =
        gateway.server.http.get("/v1/agents/support/models").bearer(supportOnly).send();
    assertThat(inAgent.status()).as(inAgent.text()).isEqualTo(200);
    assertThat(inAgent.json().at("/data/0/id").asText()).isEqualTo(GatewayFixture.MODEL);
    Http.Response otherAgent =
        gateway.server.http.get("/v1/agents/sales/models").bearer(supportOnly).send();
    assertThat(otherAgent.status()).isEqualTo(403);
    assertThat(otherAgent.json().at("/error/code").asText()).isEqualTo("agent_not_allowed");
    assertThat(gateway
            .server
            .http
            .get("/v1/agents/Not%20A%20Slug/models")
            .bearer(gateway.token)
            .send()
            .status())
        .isEqualTo(400);
  }

  @Test
  void openAisUserFieldOrTheHeaderNamesTheEndUserWhoseMemoriesAConversationSees() {
    String ada = gateway
        .server
        .http
        .post("/v1/memory")
        .bearer(gateway.token)
        .json(
            "{\"text\":\"Ada's preferred airline for work trips is Finnair.\",\"userId\":\"ada\"}")
        .send()
        .json()
        .get("id")
        .asText();
    String question = "Which airline should I book for my work trip?";

    Http.Response asAda = gateway
        .chat(gateway.token, GatewayFixture.body(question, "\"user\":\"ada\""))
        .send();
    assertThat(asAda.status()).as(asAda.text()).isEqualTo(200);
    assertThat(asAda.header("X-Engram-Memory-Ids")).contains(ada);
    assertThat(
            gateway.upstream.lastRequest().get("messages").get(0).get("content").asText())
        .contains("Finnair");
    Http.Response byHeader = gateway
        .chat(gateway.token, GatewayFixture.body(question, ""))
        .header("X-Engram-User", "ada")
        .send();
    assertThat(byHeader.header("X-Engram-Memory-Ids")).contains(ada);

    Http.Response asBob = gateway
        .chat(gateway.token, GatewayFixture.body(question, "\"user\":\"bob\""))
        .send();
    assertThat(asBob.status()).as(asBob.text()).isEqualTo(200);
    assertThat(asBob.header("X-Engram-Memory-Ids")).doesNotContain(ada);
    Http.Response nobody =
        gateway.chat(gateway.token, GatewayFixture.body(question, "")).send();
    assertThat(nobody.header("X-Engram-Memory-Ids")).doesNotContain(ada);

    Http.Response disagreeing = gateway
        .chat(gateway.token, GatewayFixture.body(question, "\"user\":\"bob\""))
        .header("X-Engram-User", "ada")
        .send();
    assertThat(disagreeing.status()).as(disagreeing.text()).isEqualTo(400);
    assertThat(disagreeing.json().at("/error/param").asText()).isEqualTo("user");
  }

  @Test
  void agentBoundariesDecideWhichMemoriesAConversationSees() {
    String sales =
        gateway.remember("The sales team's discount ceiling for Acme is 12 percent.", "sales");
    String question = GatewayFixture.body("What is the discount ceiling for Acme?", "");

    Http.Response organization = gateway.chat(gateway.token, question).send();
    assertThat(organization.header("X-Engram-Memory-Ids")).doesNotContain(sales);

    Http.Response inAgent = gateway
        .server
        .http
        .post("/v1/agents/sales/chat/completions")
        .bearer(gateway.token)
        .json(question)
        .send();
    assertThat(inAgent.status()).as(inAgent.text()).isEqualTo(200);
    assertThat(inAgent.header("X-Engram-Memory-Ids")).contains(sales);
    assertThat(
            gateway.upstream.lastRequest().get("messages").get(0).get("content").asText())
        .contains("12 percent");

    Http.Response byHeader =
        gateway.chat(gateway.token, question).header("X-Service-Agent", "sales").send();
    assertThat(byHeader.header("X-Engram-Memory-Ids")).contains(sales);

    Http.Response otherAgent = gateway
        .server
        .http
        .post("/v1/agents/support/chat/completions")
        .bearer(gateway.token)
        .json(question)
        .send();
    assertThat(otherAgent.header("X-Engram-Memory-Ids")).doesNotContain(sales);

    String supportOnly = gateway.server.token(gateway.orgId, List.of("support"), "inference:chat");
    Http.Response bound = gateway
        .server
        .http
        .post("/v1/agents/sales/chat/completions")
        .bearer(supportOnly)
        .json(question)
        .send();
    assertThat(bound.status()).isEqualTo(403);
    assertThat(bound.json().get("error").get("code").asText()).isEqualTo("agent_not_allowed");
    Http.Response unnamed = gateway.chat(supportOnly, question).send();
    assertThat(unnamed.status()).isEqualTo(403);
    assertThat(unnamed.json().get("error").get("code").asText()).isEqualTo("agent_required");
  }

  @Test
  void anotherOrganizationsMemoriesNeverReachThePrompt() {
    gateway.remember("Project Nightjar launches on the ninth of May.", null);
    String otherOrg = gateway.server.createOrganization("seed");
    String otherToken = gateway.server.token(otherOrg, null, "inference:chat");
    Http.Response response = gateway
        .chat(otherToken, GatewayFixture.body("When does Project Nightjar launch?", ""))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(response.header("X-Engram-Memory-Ids")).isEmpty();
    assertThat(gateway.upstream.lastRequest().get("messages").toString())
        .doesNotContain("Nightjar launches");
  }

  @Test
  void apiKeysWithInferenceMayChatAndTextCompletionsWork() {
    Http.Response chat =
        gateway.chat(gateway.key, GatewayFixture.body("Hello", "")).send();
    assertThat(chat.status()).as(chat.text()).isEqualTo(200);
    Http.Response completion = gateway
        .server
        .http
        .post("/v1/completions")
        .bearer(gateway.key)
        .json("{\"model\":\"engram-chat\",\"prompt\":\"Once upon a time\",\"max_tokens\":20}")
        .send();
    assertThat(completion.status()).as(completion.text()).isEqualTo(200);
    assertThat(completion.json().get("object").asText()).isEqualTo("text_completion");
    assertThat(completion.json().get("choices").get(0).get("text").asText())
        .isEqualTo("Hello from the upstream.");
    assertThat(gateway.upstream.lastRequest().get("prompt").asText()).isEqualTo("Once upon a time");
  }

  @Test
  void metricsCountGenerationsTokensAndTimeToFirstToken() {
    gateway
        .chat(gateway.token, GatewayFixture.body("Count me", "\"stream\":true"))
        .send();
    String metrics =
        gateway.server.asOperator(gateway.server.http.get("/metrics")).text();
    assertThat(metrics)
        .contains("engram_inference_tokens_total{kind=\"completion\",model=\"engram-chat\"}");
    assertThat(metrics)
        .contains(
            "engram_inference_generation_seconds_count{model=\"engram-chat\",outcome=\"completed\"}");
    assertThat(metrics)
        .contains("engram_inference_time_to_first_token_seconds_count{model=\"engram-chat\"}");
  }
}
