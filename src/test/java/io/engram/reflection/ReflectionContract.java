package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Each process on a scenario built through the routes, its outcome checked through the audit,
 * the events, the memories' state and provenance, then undone; and a dry run that changes nothing.
 * Runs on SQLite and PostgreSQL. Each test has its own organization.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ReflectionContract {
  TestServer server;

  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
  }

  @AfterAll
  void stop() {
    server.close();
  }

  @Test
  void consolidationMergesNearDuplicatesIntoTheMoreActiveOneAndUndoGivesItBack() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String kept = org.remember("Acme renews its support contract every March", "Acme");
    // Not the same text (an encode of the same text reinforces the first: docs/memory.md), but
    // nearly.
    String duplicate = org.remember("Acme renews its support contracts every March.", "acme ");
    String distinct = org.remember("Acme is headquartered in Oslo", "Acme");
    // The same words inside an agent are another boundary: never merged with the organization's.
    String agents = server
        .http
        .post("/v1/memory/agents/sales")
        .bearer(org.token())
        .json("{\"text\":\"Acme renews its support contract every March\",\"subject\":\"Acme\"}")
        .send()
        .json()
        .get("id")
        .asText();
    assertThat(org.control(kept, "reinforce").status()).isEqualTo(200);

    JsonNode audit = org.run(false);
    List<JsonNode> merges = org.changes(audit, "merge");
    assertThat(merges).hasSize(1);
    JsonNode merge = merges.getFirst();
    assertThat(merge.get("memoryId").asText()).isEqualTo(duplicate);
    assertThat(merge.get("relatedMemoryId").asText()).isEqualTo(kept);
    assertThat(merge.get("kind").asText()).isEqualTo("consolidation");
    assertThat(merge.get("reason").asText()).contains("similarity");
    assertThat(merge.at("/before/survivor/useCount").asLong()).isEqualTo(2);
    assertThat(merge.at("/after/survivor/useCount").asLong()).isEqualTo(3);
    assertThat(merge.at("/after/absorbed/state").asText()).isEqualTo("suppressed");
    assertThat(audit.at("/counts/applied/merge").asInt()).isEqualTo(1);
    assertThat(audit.at("/trigger/type").asText()).isEqualTo("manual");
    assertThat(audit.at("/settings/consolidation/similarityThreshold").asDouble())
        .isEqualTo(0.95);

    assertThat(org.state(duplicate)).isEqualTo("suppressed");
    assertThat(org.state(distinct)).isEqualTo("durable");
    assertThat(server
            .http
            .get("/v1/memory/agents/sales/" + agents)
            .bearer(org.token())
            .send()
            .json()
            .get("state")
            .asText())
        .isEqualTo("durable");
    assertThat(org.retrieve("support contract March")).contains(kept).doesNotContain(duplicate);
    JsonNode survivor = org.provenance(kept);
    assertThat(survivor.at("/uses/total").asLong()).isEqualTo(3);
    assertThat(actions(survivor)).contains("absorb");
    assertThat(survivor.at("/reflection/events/0/id").asText())
        .isEqualTo(merge.get("id").asText());
    JsonNode absorbed = org.provenance(duplicate);
    JsonNode last = absorbed.get("transitions").get(absorbed.get("transitions").size() - 1);
    assertThat(last.get("action").asText()).isEqualTo("merge");
    assertThat(last.get("actor").asText()).isEqualTo("reflection");
    assertThat(last.get("reason").asText()).contains(audit.get("id").asText()).contains(kept);

    Http.Response undo = org.undoRun(audit.get("id").asText());
    assertThat(undo.status()).as(undo.text()).isEqualTo(200);
    assertThat(undo.json().get("undone")).hasSize(1);
    assertThat(org.state(duplicate)).isEqualTo("durable");
    assertThat(org.provenance(kept).at("/uses/total").asLong()).isEqualTo(2);
    assertThat(org.retrieve("support contract March")).contains(kept, duplicate);
    assertThat(org.get("/events/" + merge.get("id").asText())
            .json()
            .at("/event/undone/by")
            .asText())
        .startsWith("credential:");
    assertThat(org.get("/audits/" + audit.get("id").asText()).json().at("/audit/undone"))
        .isNotNull();
    assertThat(org.undoRun(audit.get("id").asText()).json().get("undone")).isEmpty();
    assertThat(org.undoEvent(merge.get("id").asText()).status()).isEqualTo(409);
  }

  @Test
  void decayFlagsLongUnusedMemoriesThenSuppressesThemWhenConfiguredTo() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String old = org.remember(
        "Globex still sends purchase orders by fax",
        "Globex",
        "occurredAt",
        ReflectionClient.daysAgo(server, 400));
    String fresh = org.remember("Globex moved its office to Lisbon", "Globex");
    String usedAgain = org.remember(
        "Globex pays invoices within 60 days",
        "Globex",
        "occurredAt",
        ReflectionClient.daysAgo(server, 400));

    JsonNode first = org.run(false);
    List<String> flagged = org.changes(first, "flag_stale").stream()
        .map(e -> e.get("memoryId").asText())
        .toList();
    assertThat(flagged).containsExactlyInAnyOrder(old, usedAgain);
    assertThat(org.provenance(old).at("/reflection/flags/0/kind").asText()).isEqualTo("stale");
    assertThat(org.provenance(fresh).at("/reflection/flags")).isEmpty();
    assertThat(org.state(old)).isEqualTo("durable");

    assertThat(org.control(usedAgain, "reinforce").status()).isEqualTo(200);
    Http.Response patched = org.patchSettings("{\"decay\":{\"action\":\"suppress\"}}");
    assertThat(patched.status()).as(patched.text()).isEqualTo(200);
    JsonNode second = org.run(false);
    assertThat(org.changes(second, "suppress"))
        .extracting(e -> e.get("memoryId").asText())
        .containsExactly(old);
    assertThat(org.changes(second, "clear_stale"))
        .as(org.events("run=" + second.get("id").asText()) + " old " + old + " fresh " + fresh
            + " used " + usedAgain)
        .extracting(e -> e.get("memoryId").asText())
        .containsExactly(usedAgain);
    assertThat(org.state(old)).isEqualTo("suppressed");
    assertThat(org.retrieve("purchase orders fax")).doesNotContain(old);
    JsonNode suppress = org.changes(second, "suppress").getFirst();
    assertThat(suppress.get("reason").asText())
        .contains("activation below 0.200 for at least 30 days");

    // The suppressed memory is no longer durable, so its stale flag is cleared by the next run.
    JsonNode third = org.run(false);
    assertThat(org.changes(third, "clear_stale"))
        .extracting(e -> e.get("memoryId").asText())
        .containsExactly(old);

    Http.Response undo = org.undoEvent(suppress.get("id").asText());
    assertThat(undo.status()).as(undo.text()).isEqualTo(200);
    assertThat(org.state(old)).isEqualTo("durable");
    assertThat(org.retrieve("purchase orders fax")).contains(old);
    assertThat(actions(org.provenance(old))).endsWith("suppress", "undo");
  }

  @Test
  void candidateEvaluationPromotesCorroboratedAndConfidentCandidatesAndExpiresTheRest() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String durable = org.remember("Initech's billing contact is Peter Gibbons", "Initech");
    Http.Response mode = server
        .http
        .patch("/api/memory/settings")
        .bearer(org.adminKey())
        .json("{\"writeMode\":\"candidate_review\"}")
        .send();
    assertThat(mode.status()).as(mode.text()).isEqualTo(200);
    String corroborated = org.remember("Initech billing contact is Peter Gibbons.", "Initech");
    String confident =
        org.remember("Initech wants invoices in euros", "Initech", "confidence", 0.97);
    String doubtful =
        org.remember("Initech might open an office in Berlin", "Initech", "confidence", 0.4);
    assertThat(org.state(corroborated)).isEqualTo("candidate");

    JsonNode first = org.run(false);
    List<JsonNode> promoted = org.changes(first, "promote");
    assertThat(promoted)
        .extracting(e -> e.get("memoryId").asText())
        .containsExactlyInAnyOrder(corroborated, confident);
    JsonNode byCorroboration = promoted.stream()
        .filter(e -> e.get("memoryId").asText().equals(corroborated))
        .findFirst()
        .orElseThrow();
    assertThat(byCorroboration.get("relatedMemoryId").asText()).isEqualTo(durable);
    assertThat(byCorroboration.get("reason").asText())
        .startsWith("corroborated by durable memory " + durable);
    assertThat(org.state(corroborated)).isEqualTo("durable");
    assertThat(org.state(confident)).isEqualTo("durable");
    assertThat(org.state(doubtful)).isEqualTo("candidate");
    assertThat(org.changes(first, "expire")).isEmpty();

    assertThat(org.patchSettings(
                "{\"candidates\":{\"expireAfterDays\":1},\"consolidation\":{\"enabled\":false}}")
            .status())
        .isEqualTo(200);
    server.clock.advance(Duration.ofDays(2));
    JsonNode second = org.run(false);
    assertThat(org.changes(second, "expire"))
        .extracting(e -> e.get("memoryId").asText())
        .containsExactly(doubtful);
    assertThat(org.state(doubtful)).isEqualTo("tombstoned");
    assertThat(actions(org.provenance(doubtful))).endsWith("expire");

    assertThat(org.undoRun(second.get("id").asText()).status()).isEqualTo(200);
    assertThat(org.state(doubtful)).isEqualTo("candidate");
    assertThat(org.undoEvent(byCorroboration.get("id").asText()).status()).isEqualTo(200);
    assertThat(org.state(corroborated)).isEqualTo("candidate");
  }

  @Test
  void conflictDetectionFlagsContradictionsForReviewAndNeverMergesThem() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String yes = org.remember(
        "Umbrella prefers email for invoice questions", "Umbrella", "memoryKind", "preference");
    String no = org.remember(
        "Umbrella does not prefer email for invoice questions",
        "Umbrella",
        "memoryKind",
        "preference");
    String pro = org.remember("Umbrella's plan is Pro", "Umbrella", "memoryKind", "fact");
    String enterprise =
        org.remember("Umbrella's plan is Enterprise", "Umbrella", "memoryKind", "fact");
    String unrelated =
        org.remember("Umbrella has offices in Raccoon City", "Umbrella", "memoryKind", "fact");

    JsonNode first = org.run(false);
    List<JsonNode> conflicts = org.changes(first, "flag_conflict");
    assertThat(conflicts)
        .extracting(
            e -> pair(e.get("memoryId").asText(), e.get("relatedMemoryId").asText()))
        .containsExactlyInAnyOrder(pair(yes, no), pair(pro, enterprise));
    assertThat(conflicts)
        .extracting(e -> e.get("reason").asText())
        .anyMatch(r -> r.startsWith("negation"))
        .anyMatch(r -> r.startsWith("different value"));
    assertThat(org.changes(first, "merge")).isEmpty();
    assertThat(org.provenance(no).at("/reflection/flags/0/relatedMemoryId").asText())
        .isEqualTo(yes);
    assertThat(org.provenance(unrelated).at("/reflection/flags")).isEmpty();
    // Flagged once: a second run does not flag the same pair again.
    assertThat(org.changes(org.run(false), "flag_conflict")).isEmpty();

    assertThat(org.control(pro, "suppress").status()).isEqualTo(200);
    JsonNode third = org.run(false);
    assertThat(org.changes(third, "clear_conflict")).hasSize(1);
    assertThat(org.provenance(enterprise).at("/reflection/flags")).isEmpty();

    JsonNode negation = conflicts.stream()
        .filter(e -> e.get("reason").asText().startsWith("negation"))
        .findFirst()
        .orElseThrow();
    Http.Response undone = org.undoEvent(negation.get("id").asText());
    assertThat(undone.status()).as(undone.text()).isEqualTo(200);
    assertThat(org.provenance(yes).at("/reflection/flags"))
        .as(negation + " / " + yes + " " + no)
        .isEmpty();
  }

  @Test
  void aContradictionOverTimeIsResolvedBySupersessionAndTheUndoReopensIt() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String pro = org.remember(
        "Initech's plan is Pro",
        "Initech",
        "memoryKind",
        "fact",
        "occurredAt",
        ReflectionClient.daysAgo(server, 300));
    String enterprise = org.remember(
        "Initech's plan is Enterprise",
        "Initech",
        "memoryKind",
        "fact",
        "occurredAt",
        ReflectionClient.daysAgo(server, 10));
    assertThat(org.retrieve("What plan is Initech on?")).contains(pro, enterprise);

    JsonNode run = org.run(false);
    List<JsonNode> superseded = org.changes(run, "supersede");
    assertThat(superseded).hasSize(1);
    assertThat(superseded.getFirst().get("memoryId").asText()).isEqualTo(pro);
    assertThat(superseded.getFirst().get("relatedMemoryId").asText()).isEqualTo(enterprise);
    assertThat(org.changes(run, "flag_conflict")).isEmpty();
    // The older fact holds until the newer one starts, and is no longer what is true now.
    assertThat(org.memory(pro).get("validUntil").asText())
        .isEqualTo(org.memory(enterprise).get("occurredAt").asText());
    assertThat(org.memory(enterprise).get("supersedes").asText()).isEqualTo(pro);
    assertThat(org.retrieve("What plan is Initech on?")).contains(enterprise).doesNotContain(pro);
    assertThat(org.retrieve("What plan is Initech on?", ReflectionClient.daysAgo(server, 100)))
        .contains(pro)
        .doesNotContain(enterprise);
    assertThat(actions(org.provenance(pro))).contains("supersede");
    // Resolved once: a second run leaves the pair alone.
    JsonNode again = org.run(false);
    assertThat(org.changes(again, "supersede")).isEmpty();
    assertThat(org.changes(again, "flag_conflict")).isEmpty();

    Http.Response undone = org.undoEvent(superseded.getFirst().get("id").asText());
    assertThat(undone.status()).as(undone.text()).isEqualTo(200);
    assertThat(org.memory(pro).get("validUntil").isNull()).isTrue();
    assertThat(org.memory(enterprise).get("supersedes").isNull()).isTrue();
    assertThat(org.memory(enterprise).get("validFrom").isNull()).isTrue();

    assertThat(org.retrieve("What plan is Initech on?")).contains(pro, enterprise);

    // Erased, the memories' reflection changes keep their record but none of their words.
    JsonNode erased = org.erase("{\"subject\":\"Initech\"}");
    assertThat(erased.at("/receipt/memories/count").asInt()).isEqualTo(2);
    assertThat(erased.at("/receipt/removed").toString()).contains("reflection events");
    assertThat(org.events("run=" + run.get("id").asText()))
        .filteredOn(e -> e.get("memoryId").asText().equals(pro))
        .isNotEmpty()
        .allMatch(e -> e.get("reason").asText().equals("(erased)"));
  }

  @Test
  void aDryRunRecordsProposalsAndChangesNothing() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String kept = org.remember("Hooli's renewal is due in June", "Hooli");
    String duplicate = org.remember("Hooli's renewals are due in June.", "Hooli");
    String old = org.remember(
        "Hooli used to run on-premise servers",
        "Hooli",
        "occurredAt",
        ReflectionClient.daysAgo(server, 500));

    JsonNode dry = org.run(true);
    assertThat(dry.get("dryRun").asBoolean()).isTrue();
    List<JsonNode> events = org.events("run=" + dry.get("id").asText());
    assertThat(events).extracting(e -> e.get("change").asText()).contains("merge", "flag_stale");
    assertThat(events).allMatch(e -> e.get("outcome").asText().equals("proposed"));
    assertThat(dry.at("/counts/proposed/merge").asInt()).isEqualTo(1);
    assertThat(org.state(kept)).isEqualTo("durable");
    assertThat(org.state(duplicate)).isEqualTo("durable");
    assertThat(org.provenance(old).at("/reflection/flags")).isEmpty();
    assertThat(org.undoRun(dry.get("id").asText()).status()).isEqualTo(409);
    // A dry run does not count as the schedule's last run.
    assertThat(org.get("/metrics").json().at("/metrics/runs/dryRuns").asInt()).isEqualTo(1);
  }

  static String pair(String a, String b) {
    return a.compareTo(b) < 0 ? a + " " + b : b + " " + a;
  }

  static List<String> actions(JsonNode provenance) {
    List<String> actions = new ArrayList<>();
    provenance.get("transitions").forEach(t -> actions.add(t.get("action").asText()));
    return actions;
  }
}
