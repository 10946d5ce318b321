package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Idempotent encode and concurrent control, on SQLite (one writer) and PostgreSQL (writers that
 * really overlap): retries return the same memory and the same bytes, racing retries create
 * exactly one memory, a reused key with another body is refused, and racing state changes leave
 * one consistent history.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MemoryWriteContract {
  TestServer server;
  Memories memories;
  String org;

  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
    org = server.createOrganization("growth");
    memories = Memories.of(
        server,
        server.token(org, null, "memory:read", "memory:write", "memory:control", "memory:delete"));
  }

  @AfterAll
  void stop() {
    server.close();
  }

  Http.Response encode(String key, String body) {
    return server
        .http
        .post("/v1/memory")
        .bearer(memories.token())
        .header("Idempotency-Key", key)
        .json(body)
        .send();
  }

  long memoriesWithKey(String key) {
    return server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery("SELECT COUNT(*) FROM memories WHERE idempotency_key = :key")
            .bind("key", key)
            .mapTo(Long.class)
            .one());
  }

  long memoriesSaying(String text) {
    return server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery(
                "SELECT COUNT(*) FROM memories WHERE org_id = :org AND lower(text) LIKE :text")
            .bind("org", org)
            .bind("text", text.toLowerCase(java.util.Locale.ROOT) + "%")
            .mapTo(Long.class)
            .one());
  }

  @Test
  void anEncodeOfWhatAMemoryAlreadySaysReinforcesItInsteadOfWritingACopy() {
    Http.Response first =
        memories.encode("{\"text\":\"Acme's fiscal year starts in April.\",\"subject\":\"Acme\"}");
    assertThat(first.status()).isEqualTo(201);
    assertThat(first.json().has("deduplicated")).isFalse();
    String id = first.json().get("id").asText();
    // The same subject and text, but for case, spacing and the final stop: the same memory.
    Http.Response again = memories.encode(
        "{\"text\":\"acme's  fiscal year starts in April\",\"subject\":\"acme\",\"confidence\":0.5}");
    assertThat(again.status()).as(again.text()).isEqualTo(200);
    assertThat(again.json().get("id").asText()).isEqualTo(id);
    assertThat(again.json().get("deduplicated").asBoolean()).isTrue();
    assertThat(again.json().get("reinforcementCount").asLong()).isEqualTo(1);
    // A write that names no subject does not disagree with one that does (the README's case).
    Http.Response unnamed = memories.encode("{\"text\":\"Acme's fiscal year starts in April\"}");
    assertThat(unnamed.status()).isEqualTo(200);
    assertThat(unnamed.json().get("id").asText()).isEqualTo(id);
    assertThat(unnamed.json().get("reinforcementCount").asLong()).isEqualTo(2);
    assertThat(memoriesSaying("Acme's fiscal year")).isEqualTo(1);
    JsonNode transitions = memories.provenance(id).get("transitions");
    assertThat(transitions.get(transitions.size() - 1).get("action").asText())
        .isEqualTo("reinforce");
    assertThat(transitions.get(transitions.size() - 1).get("reason").asText())
        .contains("encoded again");
    assertThat(transitions.get(transitions.size() - 1).get("requestId").asText())
        .isEqualTo(unnamed.header("X-Request-Id"));
    assertThat(transitions.get(transitions.size() - 2).get("requestId").asText())
        .isEqualTo(again.header("X-Request-Id"));

    // About another subject, in an agent's own boundary, or at another time it is another memory.
    assertThat(memories
            .encode("{\"text\":\"Acme's fiscal year starts in April.\",\"subject\":\"Beta\"}")
            .status())
        .isEqualTo(201);
    Http.Response inAgent = memories
        .inAgent("sales")
        .encode("{\"text\":\"Acme's fiscal year starts in April.\",\"subject\":\"Acme\"}");
    assertThat(inAgent.status()).isEqualTo(201);
    assertThat(memories
            .inAgent("sales")
            .encode("{\"text\":\"Acme's fiscal year starts in April.\",\"subject\":\"Acme\"}")
            .json()
            .get("id")
            .asText())
        .isEqualTo(inAgent.json().get("id").asText());
    String monday = "{\"text\":\"Ada went to the gym\",\"occurredAt\":\"2026-03-02T18:00:00Z\"}";
    String id2 = memories.encode(monday).json().get("id").asText();
    assertThat(memories
            .encode("{\"text\":\"Ada went to the gym\",\"occurredAt\":\"2026-03-04T18:00:00Z\"}")
            .status())
        .isEqualTo(201);
    assertThat(memories.encode(monday).json().get("id").asText()).isEqualTo(id2);

    // A suppressed memory is not brought back by a new write: the new one is a memory of its own.
    assertThat(memories.control(id, "suppress", "{\"reason\":\"stale\"}").status())
        .isEqualTo(200);
    Http.Response afterSuppress =
        memories.encode("{\"text\":\"Acme's fiscal year starts in April.\",\"subject\":\"Acme\"}");
    assertThat(afterSuppress.status()).isEqualTo(201);
    assertThat(afterSuppress.json().get("id").asText()).isNotEqualTo(id);
  }

  Http.Response nearDuplicates(String adminKey, String json) {
    return server
        .http
        .patch("/api/memory/settings")
        .bearer(adminKey)
        .json("{\"nearDuplicates\":" + json + "}")
        .send();
  }

  @Test
  void nearDuplicatesAreKeptMergedOrStagedAsTheOrganizationChooses() {
    String owner = server.createOrganization("growth");
    String adminKey = server.apiKey(owner, 1000, "admin");
    Memories own = Memories.of(
        server, server.token(owner, null, "memory:read", "memory:write", "memory:control"));
    String first = own.remember("Initrode renews its support contract every March", Map.of());
    // Kept by default: a near duplicate is a memory of its own.
    String kept = own.remember("Initrode renews its support contracts every March", Map.of());
    assertThat(kept).isNotEqualTo(first);
    assertThat(own.control(kept, "suppress", "{}").status()).isEqualTo(200);

    for (String bad : List.of(
        "{\"action\":\"sometimes\"}",
        "{\"similarity\":1.5}",
        "{\"similarity\":\"high\"}",
        "{\"threshold\":0.9}")) {
      Http.Response refused = nearDuplicates(adminKey, bad);
      assertThat(refused.status()).as(bad).isEqualTo(400);
      assertThat(refused.json().path("field").asText()).as(bad).startsWith("nearDuplicates.");
    }
    assertThat(nearDuplicates(memories.token(), "{\"action\":\"merge\"}").status())
        .as("a memory token does not manage the organization")
        .isEqualTo(403);

    Http.Response merging = nearDuplicates(adminKey, "{\"action\":\"merge\",\"similarity\":0.9}");
    assertThat(merging.status()).as(merging.text()).isEqualTo(200);
    assertThat(merging.json().at("/settings/nearDuplicates/action").asText()).isEqualTo("merge");
    Http.Response merged =
        own.encode("{\"text\":\"Initrode renews its support contracts every March\"}");
    assertThat(merged.status()).as(merged.text()).isEqualTo(200);
    assertThat(merged.json().get("id").asText()).isEqualTo(first);
    assertThat(merged.json().get("deduplicated").asBoolean()).isTrue();
    JsonNode transitions = own.provenance(first).get("transitions");
    assertThat(transitions.get(transitions.size() - 1).get("reason").asText())
        .contains("near duplicate", "support contracts");
    // Something else entirely is written as ever.
    assertThat(own.encode("{\"text\":\"Initrode's office is in Austin\"}").status())
        .isEqualTo(201);

    assertThat(nearDuplicates(adminKey, "{\"action\":\"candidate\"}").status()).isEqualTo(200);
    Http.Response staged =
        own.encode("{\"text\":\"Initrode renews its support contract every March.\"}");
    assertThat(staged.status())
        .as("the exact text is still the same memory, reinforced")
        .isEqualTo(200);
    Http.Response candidate =
        own.encode("{\"text\":\"Initrode renews the support contract every March\"}");
    assertThat(candidate.status()).as(candidate.text()).isEqualTo(201);
    assertThat(candidate.json().get("state").asText()).isEqualTo("candidate");
    JsonNode encodedAs =
        own.provenance(candidate.json().get("id").asText()).get("transitions").get(0);
    assertThat(encodedAs.get("reason").asText()).contains("near duplicate of " + first);
  }

  @Test
  void aDeduplicatedEncodeRetriedWithItsKeyIsReplayedAndReinforcesOnce() {
    String body = "{\"text\":\"Globex renews every March\",\"subject\":\"Globex\"}";
    String id = memories.encode(body).json().get("id").asText();
    Http.Response deduplicated = encode("dedup-1", body);
    assertThat(deduplicated.status()).isEqualTo(200);
    assertThat(deduplicated.json().get("id").asText()).isEqualTo(id);
    Http.Response retried = encode("dedup-1", body);
    assertThat(retried.status()).isEqualTo(200);
    assertThat(retried.header("Idempotent-Replayed")).isEqualTo("true");
    assertThat(retried.text()).isEqualTo(deduplicated.text());
    assertThat(memories.get(id).json().get("reinforcementCount").asLong()).isEqualTo(1);
  }

  @Test
  void aRetryReturnsTheSameMemoryAndResponse() {
    Http.Response first =
        encode("retry-1", "{\"text\":\"Acme pays by wire transfer\",\"subject\":\"Acme\"}");
    assertThat(first.status()).isEqualTo(201);
    assertThat(first.header("Idempotent-Replayed")).isNull();
    Http.Response again =
        encode("retry-1", "{\"subject\": \"Acme\", \"text\": \"Acme pays by wire transfer\"}");
    assertThat(again.status()).isEqualTo(201);
    assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
    assertThat(again.text()).isEqualTo(first.text());
    assertThat(memoriesWithKey("retry-1")).isEqualTo(1);
    assertThat(memories
            .provenance(first.json().get("id").asText())
            .get("origin")
            .get("idempotencyKey")
            .asText())
        .isEqualTo("retry-1");

    Http.Response otherBody =
        encode("retry-1", "{\"text\":\"Acme pays by card\",\"subject\":\"Acme\"}");
    assertThat(otherBody.status()).isEqualTo(409);
    assertThat(otherBody.json().get("error").get("code").asText())
        .isEqualTo("idempotency_key_reused");
    Http.Response otherAgent = server
        .http
        .post("/v1/memory/agents/alpha")
        .bearer(memories.token())
        .header("Idempotency-Key", "retry-1")
        .json("{\"text\":\"Acme pays by wire transfer\",\"subject\":\"Acme\"}")
        .send();
    assertThat(otherAgent.status())
        .as("the same body in another boundary is another request")
        .isEqualTo(409);
    assertThat(memoriesWithKey("retry-1")).isEqualTo(1);
  }

  @Test
  void racingRetriesCreateExactlyOneMemory() throws Exception {
    int racers = 16;
    CountDownLatch start = new CountDownLatch(1);
    List<Callable<Http.Response>> calls = new ArrayList<>();
    for (int i = 0; i < racers; i++) {
      calls.add(() -> {
        start.await();
        return encode(
            "race-1", "{\"text\":\"Globex renews every January\",\"subject\":\"Globex\"}");
      });
    }
    Set<String> ids = new HashSet<>();
    Set<String> bodies = new HashSet<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(racers)) {
      List<Future<Http.Response>> futures = new ArrayList<>();
      calls.forEach(call -> futures.add(pool.submit(call)));
      start.countDown();
      for (Future<Http.Response> future : futures) {
        Http.Response response = future.get();
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        ids.add(response.json().get("id").asText());
        bodies.add(response.text());
      }
    }
    assertThat(ids).hasSize(1);
    assertThat(bodies).hasSize(1);
    assertThat(memoriesWithKey("race-1")).isEqualTo(1);
  }

  @Test
  void aKeyIsForgottenAfterItsRetentionWindow() {
    String first = encode("expiring", "{\"text\":\"Initech closes on public holidays\"}")
        .json()
        .get("id")
        .asText();
    server.clock.advance(MemoryWrites.IDEMPOTENCY_RETENTION.plus(Duration.ofMinutes(1)));
    // Forgotten, the key replays nothing: the write is a new one, and as the memory already says
    // this, that memory is reinforced (not a replay, not a copy).
    Http.Response later = encode("expiring", "{\"text\":\"Initech closes on public holidays\"}");
    assertThat(later.status()).isEqualTo(200);
    assertThat(later.header("Idempotent-Replayed")).isNull();
    assertThat(later.json().get("reinforcementCount").asLong()).isEqualTo(1);
    assertThat(later.json().get("id").asText()).isEqualTo(first);
    assertThat(encode("expiring", "{\"text\":\"Initech closes on public holidays\"}")
            .json()
            .get("id")
            .asText())
        .isEqualTo(later.json().get("id").asText());
  }

  @Test
  void racingControlLeavesOneConsistentHistory() throws Exception {
    String id = memories.remember("Umbrella's purchase orders need two approvals");
    CountDownLatch start = new CountDownLatch(1);
    List<String> verbs =
        List.of("suppress", "suppress", "reinforce", "reinforce", "suppress", "reinforce");
    try (ExecutorService pool = Executors.newFixedThreadPool(verbs.size() + 1)) {
      List<Future<Http.Response>> futures = new ArrayList<>();
      for (String verb : verbs) {
        futures.add(pool.submit(() -> {
          start.await();
          return memories.control(id, verb, null);
        }));
      }
      futures.add(pool.submit(() -> {
        start.await();
        return memories.delete(id);
      }));
      start.countDown();
      for (Future<Http.Response> future : futures) {
        assertThat(future.get().status()).isIn(200, 409);
      }
    }
    var provenance = memories.provenance(id);
    List<String> steps = MemoryStateMachineTest.transitions(provenance);
    assertThat(steps.getFirst()).isEqualTo("none>durable:encode");
    assertThat(steps.getLast()).endsWith(":delete");
    // Each transition starts where the previous one ended: no lost update.
    for (int i = 1; i < steps.size(); i++) {
      String previousTo = steps.get(i - 1).split(">")[1].split(":")[0];
      assertThat(steps.get(i)).startsWith(previousTo + ">");
    }
    long reinforcements = steps.stream().filter(s -> s.endsWith(":reinforce")).count();
    assertThat(provenance.get("uses").get("reinforcements").asLong()).isEqualTo(reinforcements);
    assertThat(memories.get(id).json().get("state").asText()).isEqualTo("tombstoned");
  }

  @Test
  void eventsAndCandidatesAreListedWithAndWithoutFilters() {
    Http.Response ingested = memories.send(
        "POST",
        "/events",
        "{\"type\":\"ticket.closed\",\"source\":\"helpdesk\","
            + "\"subject\":\"Hooli\",\"text\":\"Hooli's export bug was fixed in release 4.2.\"}");
    assertThat(ingested.status()).as(ingested.text()).isEqualTo(201);
    String event = ingested.json().get("event").get("id").asText();
    String candidate = ingested.json().get("candidates").get(0).get("id").asText();
    assertThat(memories.send("GET", "/events", null).json().get("data").findValuesAsText("id"))
        .contains(event);
    assertThat(memories
            .send("GET", "/events?type=ticket.closed&source=helpdesk", null)
            .json()
            .get("data")
            .findValuesAsText("id"))
        .containsExactly(event);
    assertThat(memories.send("GET", "/events?source=elsewhere", null).json().get("data"))
        .isEmpty();
    assertThat(memories.send("GET", "/candidates", null).json().get("data").findValuesAsText("id"))
        .contains(candidate);
    assertThat(memories.inAgent("alpha").send("GET", "/candidates", null).json().get("data"))
        .isEmpty();
  }

  long storedMemories() {
    return server
        .engram
        .services()
        .database()
        .read(h ->
            h.createQuery("SELECT COUNT(*) FROM memories").mapTo(Long.class).one());
  }

  @Test
  void aNulCharacterAnywhereIsA400NotADatabaseError() {
    long before = storedMemories();
    assertThat(memories.encode("{\"text\":\"nul \\u0000 inside\"}").status()).isEqualTo(400);
    assertThat(memories.encode("{\"text\":\"ok\",\"subject\":\"\\u0000\"}").status())
        .isEqualTo(400);
    assertThat(memories.send("GET", "/mem_%00x", null).status()).isEqualTo(400);
    assertThat(memories.send("GET", "/events?type=%00", null).status()).isEqualTo(400);
    assertThat(memories.send("GET", "/candidates?after=%00", null).status()).isEqualTo(400);
    assertThat(memories.retrieve("{\"query\":\"q\",\"subject\":\"a\\u0000b\"}").status())
        .isEqualTo(400);
    assertThat(storedMemories()).isEqualTo(before);
  }

  @Test
  void aQueryOfThousandsOfDistinctWordsIsAnswered() {
    StringBuilder query = new StringBuilder();
    // Two-character words: about 1,300 distinct terms, more than a Lucene boolean query's default
    // clause limit.
    for (int i = 36; query.length() < RetrievalRequest.MAX_QUERY - 3; i++) {
      query.append(Integer.toString(i, 36)).append(' ');
    }
    Http.Response response =
        memories.retrieve("{\"query\":\"" + query.toString().strip() + "\"}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
  }

  @Test
  void memoriesAreListedNewestFirstFilteredAndPaged() {
    Memories fresh = memories.inAgent("lister");
    String a =
        fresh.remember("Lyon ships on Mondays", Map.of("subject", "Lyon", "memoryKind", "fact"));
    String b = fresh.remember("Prefers email over calls", Map.of("memoryKind", "preference"));
    String c = fresh.remember("Lyon closes at six", Map.of("subject", "Lyon"));
    assertThat(fresh.delete(b).status()).isEqualTo(200);
    Http.Response all = fresh.send("GET", "?limit=2", null);
    assertThat(all.status()).as(all.text()).isEqualTo(200);
    assertThat(all.json().get("data").findValuesAsText("id")).containsExactly(c, a);
    assertThat(fresh.send("GET", "?limit=2&before=" + a, null).json().get("data"))
        .isEmpty();
    assertThat(fresh.send("GET", "?subject=Lyon", null).json().get("data").findValuesAsText("id"))
        .containsExactly(c, a);
    assertThat(
            fresh.send("GET", "?state=tombstoned", null).json().get("data").findValuesAsText("id"))
        .containsExactly(b);
    assertThat(fresh
            .send("GET", "?memoryKind=preference&state=durable,tombstoned", null)
            .json()
            .get("data")
            .findValuesAsText("id"))
        .containsExactly(b);
    assertThat(fresh.send("GET", "?state=gone", null).status()).isEqualTo(400);
    assertThat(fresh.send("GET", "?memoryKind=rumour", null).status()).isEqualTo(400);
    // Another agent's list does not hold them.
    assertThat(memories
            .inAgent("other")
            .send("GET", "", null)
            .json()
            .get("data")
            .findValuesAsText("id"))
        .doesNotContain(a, c);
  }

  @Test
  void anEditChangesWhatTheMemorySaysAndRetrievalFollows() {
    String id = memories.remember(
        "The Berlin office opens at eight",
        Map.of("subject", "Berlin", "metadata", Map.of("a", 1)));
    Http.Response edited = memories.send(
        "PATCH", "/" + id, "{\"text\":\"The Berlin office opens at nine\",\"metadata\":null}");
    assertThat(edited.status()).as(edited.text()).isEqualTo(200);
    assertThat(edited.json().get("text").asText()).isEqualTo("The Berlin office opens at nine");
    assertThat(edited.json().get("subject").asText()).isEqualTo("Berlin");
    assertThat(edited.json().get("metadata").isNull()).isTrue();
    Http.Response found = memories.retrieve("{\"query\":\"When does the Berlin office open?\"}");
    assertThat(found.json().at("/memories/0/text").asText()).contains("nine");
    JsonNode transitions = memories.provenance(id).get("transitions");
    assertThat(transitions.toString()).contains("edit").contains("opens at eight");

    String[][] bad = {
      {"{}", null},
      {"{\"text\":null}", "text"},
      {"{\"text\":\"\u200b\"}", "text"},
      {"{\"confidence\":2}", "confidence"},
      {"{\"memoryKind\":\"rumour\"}", "memoryKind"},
      {"{\"occurredAt\":\"2020-01-01T00:00:00Z\"}", "occurredAt"},
    };
    for (String[] refused : bad) {
      Http.Response response = memories.send("PATCH", "/" + id, refused[0]);
      assertThat(response.status()).as(refused[0]).isEqualTo(400);
      if (refused[1] != null) {
        assertThat(response.json().at("/error/param").asText()).isEqualTo(refused[1]);
      }
    }
    assertThat(memories.get(id).json().get("text").asText())
        .isEqualTo("The Berlin office opens at nine");
    // An agent cannot rewrite an organization-wide memory; a forgotten one cannot be edited.
    assertThat(memories
            .inAgent("sales")
            .send("PATCH", "/" + id, "{\"confidence\":0.5}")
            .status())
        .isEqualTo(403);
    memories.delete(id);
    assertThat(memories.send("PATCH", "/" + id, "{\"confidence\":0.5}").status())
        .isEqualTo(409);
  }
}
