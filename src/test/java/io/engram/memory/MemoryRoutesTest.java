package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Encode and retrieve through HTTP: the record returned, the context block and its statistics. */
class MemoryRoutesTest extends MemoryServerTest {

  @Test
  void encodeReturnsTheRecordAndRetrieveFindsIt() {
    Http.Response created = memories.encode("""
        {"text": "Acme's fiscal year starts in April", "subject": "Acme", "memoryKind": "fact",
         "confidence": 0.9, "metadata": {"crm": "sf-1"}}""");
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    JsonNode memory = created.json();
    assertThat(memory.get("id").asText()).startsWith("mem_");
    assertThat(memory.get("object").asText()).isEqualTo("memory");
    assertThat(memory.get("state").asText()).isEqualTo("durable");
    assertThat(memory.get("subject").asText()).isEqualTo("Acme");
    assertThat(memory.get("memoryKind").asText()).isEqualTo("fact");
    assertThat(memory.get("confidence").asDouble()).isEqualTo(0.9);
    assertThat(memory.get("agent").isNull()).isTrue();
    assertThat(memory.get("source").asText()).isEqualTo("encode");
    assertThat(memory.get("metadata").get("crm").asText()).isEqualTo("sf-1");
    assertThat(memory.get("useCount").asLong()).isEqualTo(1);

    Http.Response found = memories.retrieve("""
        {"query": "When does Acme's fiscal year begin?", "limit": 3, "includeContext": true}""");
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    JsonNode first = found.json().get("memories").get(0);
    assertThat(first.get("id").asText()).isEqualTo(memory.get("id").asText());
    assertThat(first.get("explanation").get("relevance").asDouble()).isPositive();
    JsonNode context = found.json().get("context");
    assertThat(context.get("systemBlock").asText())
        .contains("Acme's fiscal year starts in April")
        .startsWith("<memory>");
    assertThat(context.get("tokens").asInt())
        .isPositive()
        .isLessThanOrEqualTo(context.get("tokenBudget").asInt());
    assertThat(context.get("statistics").get("returned").asInt()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void theListKeepsWhatOccurredWithinTheDates() {
    Memories inAgent = memories.inAgent("dates");
    String march =
        inAgent.remember("Booked the venue", Map.of("occurredAt", "2026-03-10T09:00:00Z"));
    String april =
        inAgent.remember("Paid the caterer", Map.of("occurredAt", "2026-04-02T09:00:00Z"));
    inAgent.remember("Sent the invitations", Map.of("occurredAt", "2026-05-20T09:00:00Z"));
    Http.Response spring = inAgent.send(
        "GET", "?occurredAfter=2026-03-01T00:00:00Z&occurredBefore=2026-05-01T00:00:00Z", null);
    assertThat(spring.status()).as(spring.text()).isEqualTo(200);
    assertThat(spring.json().get("data").findValuesAsText("id")).containsExactly(april, march);
    Http.Response backwards = inAgent.send(
        "GET", "?occurredAfter=2026-05-01T00:00:00Z&occurredBefore=2026-03-01T00:00:00Z", null);
    assertThat(backwards.status()).isEqualTo(400);
    assertThat(inAgent.send("GET", "?occurredAfter=yesterday", null).status()).isEqualTo(400);
  }

  @Test
  void recallAndSearchAreAliasesOfRetrieve() {
    String id = memories.remember(
        "The staging database is reset every Sunday night", Map.of("subject", "staging"));
    for (String alias : List.of("/recall", "/search")) {
      Http.Response response =
          memories.send("POST", alias, "{\"query\": \"when is staging reset\"}");
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      assertThat(response.json().get("memories").get(0).get("id").asText()).isEqualTo(id);
    }
  }
}
