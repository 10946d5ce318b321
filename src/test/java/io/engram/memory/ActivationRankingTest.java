package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Activation matters: of two equally relevant memories the reinforced one ranks first, a
 * suppressed one never appears, and activation decays as (simulated) time passes.
 */
class ActivationRankingTest extends ServerTest {

  Memories organization() {
    String org = server.createOrganization("growth");
    return Memories.of(
        server, server.token(org, null, "memory:read", "memory:write", "memory:control"));
  }

  static JsonNode retrieve(Memories memories, String query) {
    Http.Response response =
        memories.retrieve("{\"query\":\"" + query + "\",\"limit\":10,\"recordUse\":false}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json().get("memories");
  }

  @Test
  void ofTwoEquallyRelevantMemoriesTheReinforcedOneRanksFirst() {
    Memories memories = organization();
    String text = "Deployments to production happen on Thursday afternoons";
    String first = memories.remember(text);
    // The same words at another time are another memory (the same at the same time would be the
    // first one, reinforced: docs/memory.md, "No duplicates").
    String second = memories.remember(
        text, Map.of("occurredAt", server.clock.instant().minusSeconds(60).toString()));
    JsonNode before = retrieve(memories, "When are production deployments?");
    assertThat(before.get(0).get("explanation").get("relevance").asDouble())
        .isEqualTo(before.get(1).get("explanation").get("relevance").asDouble());
    String tieWinner = before.get(0).get("id").asText();
    String other = tieWinner.equals(first) ? second : first;

    assertThat(memories.control(other, "reinforce", null).status()).isEqualTo(200);
    JsonNode after = retrieve(memories, "When are production deployments?");
    assertThat(after.get(0).get("id").asText()).isEqualTo(other);
    assertThat(
            after.get(0).get("explanation").get("activation").get("normalized").asDouble())
        .isGreaterThan(
            after.get(1).get("explanation").get("activation").get("normalized").asDouble());

    assertThat(memories.control(other, "suppress", null).status()).isEqualTo(200);
    for (int i = 0; i < 3; i++) {
      assertThat(retrieve(memories, "When are production deployments?").findValuesAsText("id"))
          .doesNotContain(other)
          .contains(tieWinner);
    }
  }

  @Test
  void activationDecaysOverSimulatedTime() {
    Memories memories = organization();
    String old = memories.remember("The on-call rotation changes every Monday at nine");
    memories.control(old, "reinforce", null);
    memories.control(old, "reinforce", null);
    double fresh =
        memories.provenance(old).get("uses").get("activation").get("baseLevel").asDouble();
    server.clock.advance(Duration.ofDays(1));
    double dayLater =
        memories.provenance(old).get("uses").get("activation").get("baseLevel").asDouble();
    server.clock.advance(Duration.ofDays(89));
    double quarterLater =
        memories.provenance(old).get("uses").get("activation").get("baseLevel").asDouble();
    assertThat(fresh).isGreaterThan(dayLater);
    assertThat(dayLater).isGreaterThan(quarterLater);
    // Base level falls by d * ln(t2 / t1) once the uses are old: 0.5 * ln(90) between day 1 and day
    // 90.
    assertThat(dayLater - quarterLater)
        .isCloseTo(0.5 * Math.log(90), org.assertj.core.data.Offset.offset(0.01));

    String recent = memories.remember(
        "The on-call rotation changes every Monday at nine",
        Map.of("occurredAt", server.clock.instant().toString()));
    List<String> ranked =
        retrieve(memories, "When does the on-call rotation change?").findValuesAsText("id");
    assertThat(ranked.indexOf(recent))
        .as("a fresh memory outranks one whose uses were three months ago")
        .isLessThan(ranked.indexOf(old));
  }

  @Test
  void retrievalIsCountedButFeedsNoActivationAndAPeekIsNotCounted() {
    Memories memories = organization();
    String id =
        memories.remember("Expense reports are due by the fifth", Map.of("subject", "expenses"));
    memories.retrieve("{\"query\":\"When are expense reports due?\",\"recordUse\":false}");
    server.engram.memory().reads().flushUses();
    assertThat(memories.get(id).json().get("retrievalCount").asInt()).isZero();
    memories.retrieve("{\"query\":\"When are expense reports due?\"}");
    server.engram.memory().reads().flushUses();
    JsonNode used = memories.get(id).json();
    assertThat(used.get("retrievalCount").asInt()).isEqualTo(1);
    // A retrieval does not enter the history activation reads: the same questions asked in any
    // order rank the same.
    assertThat(used.get("useCount").asInt()).isEqualTo(1);
    JsonNode recent = memories.provenance(id).get("uses").get("recent");
    assertThat(recent.findValuesAsText("kind")).containsExactly("encode");
  }

  @Test
  void theSameQuestionsInAnyOrderRankTheSame() {
    Memories memories = organization();
    List<String> facts = List.of(
        "The Lisbon office moved to Rua Augusta in March",
        "The Lisbon office hosts the design team",
        "Berlin's office opens at eight",
        "The design team meets on Thursdays",
        "Rua Augusta is closed to cars on Sundays");
    facts.forEach(memories::remember);
    List<String> questions = List.of(
        "Where is the Lisbon office?",
        "When does the design team meet?",
        "What time does the Berlin office open?");
    Map<String, List<String>> first = new java.util.HashMap<>();
    for (String question : questions) {
      first.put(question, ranking(memories, question));
    }
    server.engram.memory().reads().flushUses();
    for (String question : questions.reversed()) {
      for (int i = 0; i < 3; i++) {
        memories.retrieve(Json.write(Map.of("query", question)));
      }
    }
    server.engram.memory().reads().flushUses();
    for (String question : questions) {
      assertThat(ranking(memories, question)).as(question).isEqualTo(first.get(question));
    }
  }

  private static List<String> ranking(Memories memories, String question) {
    List<String> ranked = new java.util.ArrayList<>();
    memories
        .retrieve(Json.write(Map.of("query", question, "recordUse", false)))
        .json()
        .get("memories")
        .forEach(m -> ranked.add(m.get("id").asText() + " " + m.get("score").asText()));
    return ranked;
  }

  @Test
  void filtersAndContextBudget() {
    Memories memories = organization();
    memories.remember(
        "Acme prefers email over phone calls",
        Map.of("subject", "Acme", "memoryKind", "preference"));
    memories.remember(
        "Acme signed a three year contract",
        Map.of("subject", "Acme", "memoryKind", "fact", "occurredAt", "2029-06-01T00:00:00Z"));
    memories.remember(
        "Globex prefers phone calls over email",
        Map.of("subject", "Globex", "memoryKind", "preference"));
    JsonNode acme = memories
        .retrieve("{\"query\":\"how to contact them\",\"subject\":\"acme\"}")
        .json();
    assertThat(acme.get("memories").findValuesAsText("subject"))
        .isNotEmpty()
        .allMatch("Acme"::equals);
    JsonNode preferences = memories
        .retrieve("{\"query\":\"contact\",\"memoryKind\":[\"preference\"]}")
        .json();
    assertThat(preferences.get("memories").findValuesAsText("memoryKind"))
        .hasSize(2)
        .allMatch("preference"::equals);
    JsonNode dated = memories
        .retrieve("{\"query\":\"contract\",\"before\":\"2029-12-31T00:00:00Z\"}")
        .json();
    assertThat(dated.get("memories").findValuesAsText("text"))
        .containsExactly("Acme signed a three year contract");

    JsonNode tight = memories
        .retrieve("{\"query\":\"Acme\",\"includeContext\":true,\"contextMode\":\"compact\","
            + "\"maxContextTokens\":64}")
        .json()
        .get("context");
    assertThat(tight.get("tokens").asInt()).isLessThanOrEqualTo(64);
    assertThat(tight.get("statistics").get("included").asInt()
            + tight.get("statistics").get("omitted").asInt())
        .isEqualTo(tight.get("statistics").get("returned").asInt());
    assertThat(tight.get("systemBlock").asText()).startsWith("<memory>").doesNotContain("[fact");
    JsonNode full =
        memories.retrieve("{\"query\":\"Acme\",\"includeContext\":true}").json().get("context");
    assertThat(full.get("systemBlock").asText())
        .contains("[preference | Acme |")
        .contains(ContextBlock.HEADER);
  }
}
