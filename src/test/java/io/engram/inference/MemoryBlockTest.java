package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.ContextCut;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What goes into a chat is what the chat needs: no memory block for a question about something
 * else, the best memories in rank order within the organization's token budget; the floor and the
 * budget are the organization's (PATCH /config, group memory), enforced by their effect.
 */
class MemoryBlockTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("seed", Map.of());

  private static final List<String> SHOWROOM = List.of(
      "The Lisbon showroom opens at ten on weekdays and at noon on Saturdays.",
      "The showroom's demonstration car is a blue electric estate.",
      "Test drives from the showroom need a driving licence and a booking.",
      "The showroom manager is Inês Duarte.",
      "Showroom visitors park in the garage under the building.",
      "The showroom was repainted in March.");

  @BeforeAll
  static void remember() {
    SHOWROOM.forEach(text -> gateway.remember(text, null));
  }

  @AfterEach
  void reset() {
    configure("{\"memory\":null}");
  }

  @Test
  void aQuestionAboutSomethingElseGetsNoMemory() {
    for (String unrelated : List.of("Inspector says hi", "What is the capital of Peru?")) {
      Http.Response response = chat(unrelated, "");
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      assertThat(response.header("X-Engram-Memory-Ids")).as(unrelated).isEmpty();
      assertThat(gateway.upstream.lastRequest().get("messages")).hasSize(1);
    }
    Http.Response related = chat("When does the Lisbon showroom open on Saturdays?", "");
    assertThat(related.header("X-Engram-Memory-Ids")).isNotEmpty();
    assertThat(injected(related).getFirst()).isEqualTo(idOf(SHOWROOM.getFirst()));
  }

  /**
   * Each memory of the block passes a floor of its own, not only the best one: in a small
   * organization whose memories are about different things, a question about one of them gets
   * that one, not the rest that happen to be the only other candidates (the console once showed
   * six of seven injected, scores 0.782 down to 0.059).
   */
  @Test
  void aSmallOrganizationAskedAboutOneMemoryInjectsThatOneAlone() {
    String org = gateway.server.createOrganization("seed");
    String token = gateway.server.token(org, null, "inference:chat", "memory:write");
    List<String> facts = List.of(
        "Acme's fiscal year starts in April.",
        "The office cat is called Pixel.",
        "Parking passes are renewed every January.",
        "The support hotline is open until eight in the evening.",
        "Our logo is teal and orange.",
        "The quarterly offsite is in Porto this year.",
        "Payroll runs on the twenty-fifth of each month.");
    List<String> ids = new ArrayList<>();
    for (String fact : facts) {
      Http.Response written = gateway
          .server
          .http
          .post("/v1/memory")
          .bearer(token)
          .json(Json.write(Map.of("text", fact)))
          .send();
      assertThat(written.status()).as(written.text()).isEqualTo(201);
      ids.add(written.json().get("id").asText());
    }
    Http.Response answer = gateway
        .chat(token, GatewayFixture.body("When does Acme's fiscal year start?", ""))
        .send();
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    assertThat(injected(answer)).containsExactly(ids.getFirst());
  }

  @Test
  void theBlockHoldsTheBestMemoriesUpToTheLimitInRankOrder() {
    String question = "Who manages the showroom, and where do visitors park?";
    List<JsonNode> retrieved = retrieve(question);
    List<String> ranked = retrieved.stream().map(m -> m.get("id").asText()).toList();
    // The leading run that passes each memory's own floor: both memories the question asks about.
    double least = Math.max(
        ContextCut.MEMBER_FLOOR,
        ContextCut.SHARE_OF_BEST * retrieved.getFirst().get("score").asDouble());
    List<String> passing = retrieved.stream()
        .takeWhile(m -> m.get("score").asDouble() >= least)
        .map(m -> m.get("id").asText())
        .toList();
    assertThat(passing)
        .contains(idOf(SHOWROOM.get(3)), idOf(SHOWROOM.get(4)))
        .hasSizeLessThan(SHOWROOM.size());
    assertThat(injected(chat(question, ""))).isEqualTo(passing);
    assertThat(injected(chat(question, "\"memory\":{\"limit\":2}")))
        .isEqualTo(ranked.subList(0, 2));
  }

  @Test
  void theRelevanceFloorIsTheOrganizations() {
    String question = "Which car does the showroom demonstrate?";
    double best = retrieve(question).getFirst().get("score").asDouble();
    assertThat(best).isLessThan(0.99);
    configure("{\"memory\":{\"relevance_floor\":" + (best + 0.01) + "}}");
    assertThat(injected(chat(question, ""))).isEmpty();
    configure("{\"memory\":{\"relevance_floor\":" + (best - 0.01) + "}}");
    assertThat(injected(chat(question, ""))).isNotEmpty();
    // At zero, even a greeting gets the best of what there is.
    configure("{\"memory\":{\"relevance_floor\":0}}");
    assertThat(injected(chat("Inspector says hi", ""))).isNotEmpty();
  }

  @Test
  void theTokenBudgetIsTheOrganizationsUnlessTheRequestSays() {
    String question = "Tell me everything about the showroom: hours, car, drives, manager, parking";
    int full = Integer.parseInt(chat(question, "").header("X-Engram-Memory-Tokens"));
    assertThat(full).isGreaterThan(64);
    configure("{\"memory\":{\"context_tokens\":64}}");
    Http.Response tight = chat(question, "");
    assertThat(Integer.parseInt(tight.header("X-Engram-Memory-Tokens"))).isBetween(1, 64);
    Http.Response asked = chat(question, "\"memory\":{\"max_tokens\":2000}");
    assertThat(Integer.parseInt(asked.header("X-Engram-Memory-Tokens"))).isEqualTo(full);
  }

  @Test
  void theSettingsAreReadBackWithTheirDefaultsAndBadValuesAreRefused() {
    JsonNode config = gateway
        .server
        .asOperator(gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/config"))
        .json();
    assertThat(config.at("/memory/context_tokens").asLong()).isEqualTo(1024);
    assertThat(config.at("/memory/relevance_floor").asDouble()).isEqualTo(0.55);
    assertThat(config.at("/fields/memory.context_tokens/default_source").asText())
        .isEqualTo("plan");
    String free = gateway.server.createOrganization("free");
    assertThat(gateway
            .server
            .asOperator(gateway.server.http.get("/v1/organizations/" + free + "/config"))
            .json()
            .at("/memory/context_tokens")
            .asLong())
        .as("half of a Free request's 1,024 tokens")
        .isEqualTo(512);
    for (String[] bad : new String[][] {
      {"{\"memory\":{\"relevance_floor\":1.5}}", "memory.relevance_floor"},
      {"{\"memory\":{\"relevance_floor\":\"high\"}}", "memory.relevance_floor"},
      {"{\"memory\":{\"relevance_floor\":-0.1}}", "memory.relevance_floor"},
      {"{\"memory\":{\"context_tokens\":10}}", "memory.context_tokens"},
      {"{\"memory\":{\"context_tokens\":0.5}}", "memory.context_tokens"},
      {"{\"memory\":{\"recall\":3}}", "memory.recall"}
    }) {
      Http.Response refused = gateway.server.asOperator(gateway
          .server
          .http
          .patch("/v1/organizations/" + gateway.orgId + "/config")
          .json(bad[0]));
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(bad[1]);
    }
  }

  private static void configure(String json) {
    Http.Response response = gateway.server.asOperator(gateway
        .server
        .http
        .patch("/v1/organizations/" + gateway.orgId + "/config")
        .json(json));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
  }

  private static Http.Response chat(String question, String extra) {
    Http.Response response =
        gateway.chat(gateway.token, GatewayFixture.body(question, extra)).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response;
  }

  private static List<String> injected(Http.Response response) {
    String ids = response.header("X-Engram-Memory-Ids");
    return ids == null || ids.isEmpty() ? List.of() : Arrays.asList(ids.split(","));
  }

  /** The chat's retrieval as the memory API gives it (the same query, nothing recorded). */
  private static List<JsonNode> retrieve(String question) {
    Http.Response response = gateway
        .server
        .http
        .post("/v1/memory/retrieve")
        .bearer(gateway.token)
        .json(Json.write(Map.of("query", question, "limit", ContextCut.LIMIT, "recordUse", false)))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    List<JsonNode> ranked = new ArrayList<>();
    response.json().get("memories").forEach(ranked::add);
    return ranked;
  }

  private static String idOf(String text) {
    return retrieve(text).stream()
        .filter(m -> m.get("text").asText().equals(text))
        .findFirst()
        .orElseThrow()
        .get("id")
        .asText();
  }
}
