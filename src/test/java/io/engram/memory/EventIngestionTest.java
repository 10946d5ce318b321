package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Developer events: BusinessEvent records, the deterministic staging pipeline, and provenance back to the event. */
class EventIngestionTest extends ServerTest {
  static Memories memories;

  @BeforeAll
  static void organization() {
    String org = server.createOrganization("growth");
    memories = Memories.of(
        server, server.token(org, null, "memory:read", "memory:write", "memory:control"));
  }

  static JsonNode ingest(Memories memories, String json) {
    Http.Response response = memories.send("POST", "/events", json);
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json();
  }

  static java.util.List<String> skipped(JsonNode event) {
    java.util.List<String> reasons = new java.util.ArrayList<>();
    event.get("staging").get("statements").forEach(s -> {
      if (!s.get("skipped").isNull()) {
        reasons.add(s.get("skipped").asText());
      }
    });
    return reasons;
  }

  @Test
  void anEventIsRecordedAndStagesCandidatesNamingIt() {
    JsonNode ingested = ingest(memories, """
        {"type": "customer.plan_changed", "source": "billing", "subject": "Acme",
         "text": "Acme moved to the Growth plan. Why did they move now? Thanks!\\nTheir renewal date is 1 May. Acme moved to the Growth plan.",
         "metadata": {"invoice": "inv_42", "memoryKind": "fact", "confidence": 0.7}}""");
    JsonNode event = ingested.get("event");
    assertThat(event.get("id").asText()).startsWith("evt_");
    assertThat(event.get("object").asText()).isEqualTo("business_event");
    assertThat(event.get("metadata").get("invoice").asText()).isEqualTo("inv_42");
    assertThat(skipped(event)).containsExactly("question", "too_short", "duplicate");
    JsonNode candidates = ingested.get("candidates");
    assertThat(candidates.findValuesAsText("text"))
        .containsExactly("Acme moved to the Growth plan.", "Their renewal date is 1 May.");
    for (JsonNode candidate : candidates) {
      assertThat(candidate.get("state").asText()).isEqualTo("candidate");
      assertThat(candidate.get("source").asText()).isEqualTo("event");
      assertThat(candidate.get("memoryKind").asText()).isEqualTo("fact");
      assertThat(candidate.get("confidence").asDouble()).isEqualTo(0.7);
      assertThat(candidate.get("eventId").asText()).isEqualTo(event.get("id").asText());
      JsonNode provenance = memories.provenance(candidate.get("id").asText());
      assertThat(provenance.get("origin").get("event").get("type").asText())
          .isEqualTo("customer.plan_changed");
      assertThat(provenance.get("transitions").get(0).get("action").asText()).isEqualTo("stage");
      assertThat(provenance.get("transitions").get(0).get("reason").asText())
          .contains(event.get("id").asText());
    }
    assertThat(memories.ids("When is Acme's renewal?", 20))
        .as("candidates are not retrieved")
        .doesNotContain(candidates.findValuesAsText("id").toArray(String[]::new));

    JsonNode listed =
        memories.send("GET", "/events?type=customer.plan_changed", null).json();
    assertThat(listed.get("data").findValuesAsText("id"))
        .contains(event.get("id").asText());
    assertThat(memories
            .send("GET", "/events/" + event.get("id").asText(), null)
            .json()
            .get("text")
            .asText())
        .contains("renewal date");

    JsonNode again = ingest(memories, """
        {"type": "customer.plan_changed", "source": "billing", "subject": "Acme",
         "text": "Acme moved to the Growth plan. Their renewal date is 1 May."}""");
    assertThat(again.get("candidates")).isEmpty();
    assertThat(skipped(again.get("event"))).containsExactly("already_known", "already_known");

    String approved = candidates.get(1).get("id").asText();
    memories.control(approved, "approve", null);
    assertThat(memories.ids("When is Acme's renewal?", 5)).contains(approved);
  }

  @Test
  void anEventMarkedNotMemorableStagesNothingAndAgentsKeepTheirEvents() {
    JsonNode quiet = ingest(memories.inAgent("billing-bot"), """
        {"type": "heartbeat", "source": "monitor", "text": "The nightly export finished without errors.",
         "metadata": {"memorable": false}}""");
    assertThat(quiet.get("candidates")).isEmpty();
    assertThat(quiet.get("event").get("agent").asText()).isEqualTo("billing-bot");
    String id = quiet.get("event").get("id").asText();
    assertThat(memories.send("GET", "/events/" + id, null).status())
        .as("not in the organization boundary")
        .isEqualTo(404);
    assertThat(memories
            .inAgent("billing-bot")
            .send("GET", "/events", null)
            .json()
            .get("data")
            .findValuesAsText("id"))
        .contains(id);
    assertThat(memories.send("GET", "/events", null).json().get("data").findValuesAsText("id"))
        .doesNotContain(id);
  }
}
