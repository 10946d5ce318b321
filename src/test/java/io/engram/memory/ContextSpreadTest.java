package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.TestServer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Context around a hit, through the HTTP API: the turn after a relevant one rises with it (its
 * explanation names the hit that lent its score), also when the client dated a session's turns with
 * the session's time and wrote them in order; memories far in time, outside the caller's boundary,
 * or written at one instant without a time of their own do not.
 */
class ContextSpreadTest {
  static TestServer server;
  static Memories memories;
  static final Instant SESSION = Instant.parse("2026-05-01T18:00:00Z");

  @BeforeAll
  static void start() {
    server = TestServer.start();
    String org = server.createOrganization("growth");
    memories = Memories.of(server, server.token(org, null, "memory:read", "memory:write"));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static String at(String text, Instant when) {
    return memories.remember(text, Map.of("occurredAt", when.toString(), "subject", "Melanie"));
  }

  private static List<JsonNode> retrieve(String query, String mode) {
    JsonNode body = memories
        .retrieve(Json.write(Map.of("query", query, "limit", 10, "mode", mode)))
        .json();
    List<JsonNode> ranked = new ArrayList<>();
    body.get("memories").forEach(ranked::add);
    return ranked;
  }

  @Test
  void theTurnAfterAHitRisesWithItAndSaysWhy() {
    String hit = at("Here is the watercolour I finished of the harbour at dusk", SESSION);
    String answer = at("Took me three weekends, mostly mornings", SESSION.plusSeconds(1));
    // Written after the hit and dated the same instant: the next turn of its session.
    String sameInstant = at("Cleaning brushes is the worst chore", SESSION);
    String later = at("Mornings at the gym keep me sane", SESSION.plusSeconds(7200));

    List<JsonNode> ranked = retrieve("How long did the harbour watercolour take?", "hybrid");
    List<String> ids = ranked.stream().map(m -> m.get("id").asText()).toList();
    assertThat(ids.get(0)).isEqualTo(hit);
    JsonNode lifted = ranked.get(ids.indexOf(answer));
    assertThat(lifted.at("/explanation/contextOf").asText()).isEqualTo(hit);
    assertThat(lifted.get("score").asDouble())
        .isLessThan(ranked.get(0).get("score").asDouble())
        .isEqualTo(lifted.at("/explanation/score").asDouble());
    for (JsonNode other : ranked) {
      String lender = other.at("/explanation/contextOf").asText(null);
      if (other.get("id").asText().equals(sameInstant)) {
        assertThat(lender).isEqualTo(hit);
      }
      if (other.get("id").asText().equals(later)) {
        assertThat(lender).isNull(); // two hours on: another session
      }
    }
    // Only the shipped hybrid ranking spreads; a single mode ranks memories on their own.
    retrieve("How long did the harbour watercolour take?", "lexical")
        .forEach(m -> assertThat(m.at("/explanation/contextOf").isNull()).isTrue());
  }

  /**
   * Turns a client dated with their session's time are in the order they were written; memories
   * written without a time (a bulk import of unrelated facts) occurred when they were written, and
   * those of one instant are not each other's context.
   */
  @Test
  void aSessionsTurnsAreInWriteOrderButUndatedFactsAreNotContext() {
    Instant session = Instant.parse("2026-04-02T10:00:00Z");
    String asks = at("Which trail did you take up the ridge last weekend?", session);
    String answer = at("The northern one, past the old quarry.", session);
    List<JsonNode> ranked = retrieve("Which trail up the ridge last weekend?", "hybrid");
    List<String> ids = ranked.stream().map(m -> m.get("id").asText()).toList();
    assertThat(ids.get(0)).isEqualTo(asks);
    assertThat(ranked.get(ids.indexOf(answer)).at("/explanation/contextOf").asText())
        .isEqualTo(asks);

    // In an organization of their own: a ranking of these facts only.
    Memories office = Memories.of(
        server,
        server.token(server.createOrganization("growth"), null, "memory:read", "memory:write"));
    String fact = office.remember("The ferry timetable changes every October", Map.of());
    String unrelated = office.remember("Badges are printed at the front desk", Map.of());
    List<JsonNode> facts = new ArrayList<>();
    office
        .retrieve(Json.write(Map.of("query", "When does the ferry timetable change?", "limit", 10)))
        .json()
        .get("memories")
        .forEach(facts::add);
    assertThat(facts.getFirst().get("id").asText()).isEqualTo(fact);
    JsonNode other = facts.stream()
        .filter(m -> m.get("id").asText().equals(unrelated))
        .findFirst()
        .orElseThrow();
    assertThat(other.at("/explanation/contextOf").asText(null)).isNotEqualTo(fact);
  }

  /**
   * Time-aware retrieval: a question that names a day prefers what occurred that day over what
   * matches it as well on other days (more of them than the searches' candidates), and the
   * explanation says so.
   */
  @Test
  void aQuestionThatNamesADayPrefersWhatOccurredThatDay() {
    Instant day = Instant.parse("2026-03-03T15:00:00Z");
    List<String> elsewhere = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      elsewhere.add(at(
          "Started a new pottery class with the neighbours, week " + i,
          day.minusSeconds(86_400L * (i + 3))));
    }
    String thatDay = at("Started a new pottery class with my sister", day);

    List<JsonNode> dated =
        retrieve("What pottery class did Melanie start on 3 March, 2026?", "hybrid");
    assertThat(dated.getFirst().get("id").asText())
        .as(dated.subList(0, 3).toString())
        .isEqualTo(thatDay);
    assertThat(dated.getFirst().get("explanation").get("timeMatch").asBoolean()).isTrue();
    assertThat(dated.stream()
            .filter(m -> elsewhere.contains(m.get("id").asText()))
            .noneMatch(m -> m.get("explanation").get("timeMatch").asBoolean()))
        .isTrue();

    List<JsonNode> undated = retrieve("What pottery class did Melanie start?", "hybrid");
    assertThat(undated).allMatch(m -> !m.get("explanation").get("timeMatch").asBoolean());
  }

  /**
   * A hit that asks something lends the turn right after it more than its other neighbours: the
   * question matched the query's words, the next turn holds the answer and shares few of them.
   */
  @Test
  void theTurnAfterAHitThatAsksIsItsAnswer() {
    Instant evening = Instant.parse("2026-06-10T19:00:00Z");
    String before = at("The kids have been racing each other around the block", evening);
    String asks = at("How often do you all work out together as a family?", evening.plusSeconds(1));
    String answer = at("Three times a week; it keeps us on track.", evening.plusSeconds(2));

    List<JsonNode> ranked = retrieve("How often does the family work out together?", "hybrid");
    List<String> ids = ranked.stream().map(m -> m.get("id").asText()).toList();
    assertThat(ids.get(0)).isEqualTo(asks);
    assertThat(ids.indexOf(answer)).isEqualTo(1);
    JsonNode lifted = ranked.get(1);
    assertThat(lifted.at("/explanation/contextOf").asText()).isEqualTo(asks);
    assertThat(lifted.get("score").asDouble())
        .isCloseTo(ContextSpread.ANSWER * ranked.get(0).get("score").asDouble(), within(0.001));
    // The turn before the question is its neighbour too, lent the ordinary share.
    JsonNode earlier = ranked.get(ids.indexOf(before));
    assertThat(earlier.get("score").asDouble()).isLessThan(lifted.get("score").asDouble());
  }

  /**
   * A question that asks for a kind of answer (how often, how long, why...) prefers, of memories
   * otherwise alike, the one that holds such an answer; the explanation says so.
   */
  @Test
  void aQuestionPrefersAMemoryThatHoldsTheKindOfAnswerItAsksFor() {
    Instant day = Instant.parse("2025-01-10T09:00:00Z");
    String plain = at("I swim laps at the lake with my brother", day);
    String often =
        at("I swim laps at the lake with my brother twice a week", day.plusSeconds(86_400));

    List<JsonNode> ranked = retrieve("How often does Melanie swim laps at the lake?", "hybrid");
    List<String> ids = ranked.stream().map(m -> m.get("id").asText()).toList();
    assertThat(ids.indexOf(often)).isLessThan(ids.indexOf(plain));
    assertThat(ranked.get(ids.indexOf(often)).at("/explanation/answerMatch").asBoolean())
        .isTrue();
    assertThat(ranked.get(ids.indexOf(plain)).at("/explanation/answerMatch").asBoolean())
        .isFalse();
    // A question that asks for no such kind, and a single mode, raise nothing for it.
    assertThat(retrieve("Where does Melanie swim laps?", "hybrid"))
        .allMatch(m -> !m.at("/explanation/answerMatch").asBoolean());
    assertThat(retrieve("How often does Melanie swim laps at the lake?", "lexical"))
        .allMatch(m -> !m.at("/explanation/answerMatch").asBoolean());
  }
}
