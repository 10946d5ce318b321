package io.engram.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The SDK against a running Engram (started by the server's SdkTest), not a mock: ENGRAM_URL,
 * ENGRAM_ADMIN, ENGRAM_TOKEN, ENGRAM_KEY and ENGRAM_LIMITED in the environment.
 */
class EngramLiveTest {

  private static Engram client(String key, int retries) {
    String url = System.getenv("ENGRAM_URL");
    if (url == null) {
      throw new IllegalStateException("ENGRAM_URL is not set: run through the server's SdkTest");
    }
    return Engram.builder().baseUrl(url).apiKey(System.getenv(key)).maxRetries(retries).build();
  }

  @Test
  void rememberRecallExplainUpdateListForget() {
    Engram engram = client("ENGRAM_TOKEN", 2);
    JsonNode memory = engram.memory().remember(
        "Acme's Oslo office opens at seven", Memory.options().subject("Acme").kind("fact"));
    String id = memory.path("id").asText();
    assertTrue(id.startsWith("mem_"));
    Memory.Recall recall = engram.memory().recall("When does the Oslo office open?", 3, null);
    assertEquals(id, recall.memories().get(0).path("id").asText());
    assertTrue(recall.context().contains("seven"));
    JsonNode edited = engram.memory().update(id, Map.of("text", "Acme's Oslo office opens at six"), null);
    assertEquals("Acme's Oslo office opens at six", edited.path("text").asText());
    engram.memory().reinforce(id, "confirmed", null);
    assertTrue(engram.memory().explain(id, null).path("transitions").toString().contains("edit"));
    List<String> ids = new ArrayList<>();
    engram.memory().list(null, null, 1).forEach(m -> ids.add(m.path("id").asText()));
    assertTrue(ids.contains(id));
    assertEquals("tombstoned", engram.memory().forget(id, null).path("state").asText());
  }

  @Test
  void anEndUserIsErasedWithAReceipt() {
    Engram carol = client("ENGRAM_TOKEN", 2).forUser("carol@example.net");
    String id = carol.memory().remember("Carol's desk is 4B", Memory.options()).get("id").asText();
    JsonNode erasure = carol.memory().erase(
        Map.of("reason", "Carol asked to be forgotten"), null, java.time.Duration.ofMinutes(2));
    assertEquals("completed", erasure.path("status").asText());
    assertEquals(1, erasure.at("/receipt/memories/count").asInt());
    assertTrue(erasure.at("/receipt/digest").asText().startsWith("sha256:"));
    assertEquals("", carol.memory().get(id, null).path("text").asText());
  }

  @Test
  void anEndUsersMemoryIsTheirsAlone() {
    Engram ada = client("ENGRAM_TOKEN", 2).forUser("ada@example.net");
    JsonNode remembered = ada.memory().remember(
        "My favourite Braga bookshop is Centésima Página", Memory.options().sessionId("chat-3"));
    assertEquals("ada@example.net", remembered.get("userId").asText());
    assertEquals("chat-3", remembered.get("sessionId").asText());
    String id = remembered.get("id").asText();
    assertEquals(id, ada.memory().recall("favourite Braga bookshop", 3, null).memories().get(0)
        .get("id").asText());
    Engram bob = client("ENGRAM_TOKEN", 2).forUser("bob@example.net");
    assertTrue(bob.memory().recall("favourite Braga bookshop", 3, null).memories().stream()
        .noneMatch(m -> m.get("id").asText().equals(id)));
    EngramException missing = assertThrows(EngramException.class, () -> bob.memory().get(id, null));
    assertEquals(404, missing.status());
  }

  @Test
  void businessEventsAreIngestedAndListedAsInTheSpec() {
    Engram engram = client("ENGRAM_TOKEN", 2);
    String text = "Acme renewed for two years " + System.nanoTime();
    JsonNode ingested = engram.memory().events().ingest(
        Map.of("type", "note", "source", "crm", "text", text), null);
    String id = ingested.path("event").path("id").asText();
    assertTrue(id.startsWith("evt_"), ingested.toString());
    List<String> ids = new ArrayList<>();
    engram.memory().events().list("note", null).forEach(e -> ids.add(e.path("id").asText()));
    assertTrue(ids.contains(id));
  }

  @Test
  void aRetriedWriteNeverStoresTwice() {
    Engram engram = client("ENGRAM_TOKEN", 2);
    String key = "java-" + System.nanoTime();
    JsonNode first = engram.memory().remember("Oslo closes at four", Memory.options().idempotencyKey(key));
    JsonNode again = engram.memory().remember("Oslo closes at four", Memory.options().idempotencyKey(key));
    assertEquals(first.path("id").asText(), again.path("id").asText());
  }

  @Test
  void typedErrorsCarryTheirFields() {
    Engram engram = client("ENGRAM_TOKEN", 2);
    EngramException bad = assertThrows(EngramException.class, () -> engram.memory().remember(""));
    assertEquals(400, bad.status());
    assertEquals("text", bad.param());
    assertTrue(bad.requestId().startsWith("req_"));
    assertEquals(404, assertThrows(EngramException.class, () -> engram.memory().get("mem_x", null)).status());
    Engram limited = client("ENGRAM_LIMITED", 0);
    limited.memory().recall("anything", null, null);
    EngramException tooMany =
        assertThrows(EngramException.class, () -> limited.memory().recall("anything", null, null));
    assertEquals(429, tooMany.status());
    assertTrue(tooMany.retryAfter() > 0);
  }

  @Test
  void assistantsWithOptimisticConcurrencyAndAdministration() {
    Engram engram = client("ENGRAM_KEY", 2);
    String assistant = engram.assistants().create("Java desk", "org_shared").path("_id").asText();
    long version = engram.assistants().capabilities(assistant).path("version").asLong();
    JsonNode changed = engram.assistants()
        .setCapabilities(assistant, List.of("search_org_knowledge"), null, version);
    assertTrue(changed.path("assistant").path("capabilities").toString().contains("search_org_knowledge"));
    assertEquals(412, assertThrows(EngramException.class,
        () -> engram.assistants().setCapabilities(assistant, List.of(), null, version)).status());

    Engram admin = client("ENGRAM_ADMIN", 2);
    String org = admin.admin().createOrganization("Java Org", "seed").path("id").asText();
    JsonNode token = admin.admin().createToken(org, "bot", List.of("memory:read"));
    assertTrue(token.path("token").asText().startsWith("engc_"));
    assertTrue(admin.admin().organizations().stream().anyMatch(o -> o.path("id").asText().equals(org)));
    assertTrue(engram.openAiBaseUrl().endsWith("/v1"));
  }
}
