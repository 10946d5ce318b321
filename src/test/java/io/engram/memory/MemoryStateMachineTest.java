package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every transition of the state machine over HTTP, with what retrieval and provenance show after
 * each: the spec's table, the transitions Engram adds (restore, approve, reject, delete of a
 * candidate or suppressed memory), the idempotent repeats and the refused starts (409).
 */
class MemoryStateMachineTest extends MemoryServerTest {

  static List<String> transitions(JsonNode provenance) {
    List<String> steps = new ArrayList<>();
    provenance
        .get("transitions")
        .forEach(t -> steps.add((t.get("from").isNull() ? "none" : t.get("from").asText()) + ">"
            + t.get("to").asText() + ":" + t.get("action").asText()));
    return steps;
  }

  @Test
  void durableReinforceSuppressRestoreDelete() {
    String id = memories.remember(
        "The VPN gateway certificate expires on 3 March",
        java.util.Map.of("subject", "VPN gateway"));
    assertThat(memories.ids("When does the VPN certificate expire?", 5)).contains(id);

    Http.Response reinforced =
        memories.control(id, "reinforce", "{\"reason\":\"answered a ticket\",\"actor\":\"sdk\"}");
    assertThat(reinforced.status()).as(reinforced.text()).isEqualTo(200);
    assertThat(reinforced.json().get("reinforcementCount").asInt()).isEqualTo(1);
    assertThat(reinforced.json().get("state").asText()).isEqualTo("durable");

    Http.Response suppressed =
        memories.control(id, "suppress", "{\"reason\":\"certificate was renewed\"}");
    assertThat(suppressed.json().get("state").asText()).isEqualTo("suppressed");
    assertThat(memories.ids("When does the VPN certificate expire?", 20)).doesNotContain(id);
    assertThat(memories.control(id, "suppress", null).status())
        .as("suppress again is a no-op")
        .isEqualTo(200);
    Http.Response reinforceSuppressed = memories.control(id, "reinforce", null);
    assertThat(reinforceSuppressed.status()).isEqualTo(409);
    assertThat(reinforceSuppressed.json().get("error").get("code").asText())
        .isEqualTo("invalid_state");

    assertThat(memories.control(id, "restore", null).json().get("state").asText())
        .isEqualTo("durable");
    assertThat(memories.ids("When does the VPN certificate expire?", 5)).contains(id);

    Http.Response deleted = memories.delete(id);
    assertThat(deleted.status()).isEqualTo(200);
    assertThat(deleted.json().get("state").asText()).isEqualTo("tombstoned");
    assertThat(memories.ids("When does the VPN certificate expire?", 20)).doesNotContain(id);
    assertThat(memories.delete(id).status()).as("delete again is a no-op").isEqualTo(200);
    for (String verb : List.of("reinforce", "suppress", "restore", "approve", "reject")) {
      assertThat(memories.control(id, verb, null).status())
          .as(verb + " on a tombstone")
          .isEqualTo(409);
    }

    JsonNode kept = memories.get(id).json();
    assertThat(kept.get("state").asText()).isEqualTo("tombstoned");
    assertThat(kept.get("text").asText()).as("kept for audit").contains("VPN gateway certificate");
    JsonNode provenance = memories.provenance(id);
    assertThat(transitions(provenance))
        .containsExactly(
            "none>durable:encode",
            "durable>durable:reinforce",
            "durable>suppressed:suppress",
            "suppressed>durable:restore",
            "durable>tombstoned:delete");
    JsonNode reinforce = provenance.get("transitions").get(1);
    assertThat(reinforce.get("reason").asText()).isEqualTo("answered a ticket");
    assertThat(reinforce.get("actor").asText()).isEqualTo("sdk");
    assertThat(reinforce.get("credentialId").asText()).startsWith("tok_");
    assertThat(reinforce.get("requestId").asText()).isNotBlank();
    assertThat(provenance.get("uses").get("reinforcements").asInt()).isEqualTo(1);
  }

  @Test
  void candidateReviewApproveAndReject() {
    String adminKey = server.apiKey(org, 1000, "admin");
    Http.Response switched = http.patch("/api/memory/settings")
        .bearer(adminKey)
        .json("{\"writeMode\":\"candidate_review\"}")
        .send();
    assertThat(switched.status()).as(switched.text()).isEqualTo(200);
    try {
      String approved =
          memories.remember("Quarterly business reviews happen in the first week of each quarter");
      String rejected =
          memories.remember("Quarterly business reviews are optional for small customers");
      assertThat(memories.get(approved).json().get("state").asText()).isEqualTo("candidate");
      assertThat(memories.ids("When are quarterly business reviews?", 20))
          .doesNotContain(approved, rejected);
      JsonNode listed = memories.send("GET", "/candidates", null).json().get("data");
      assertThat(listed.findValuesAsText("id")).contains(approved, rejected);
      assertThat(memories.control(approved, "reinforce", null).status())
          .as("a candidate is not reinforced")
          .isEqualTo(409);

      assertThat(memories
              .control(approved, "approve", "{\"reason\":\"checked with sales\"}")
              .json()
              .get("state")
              .asText())
          .isEqualTo("durable");
      assertThat(memories
              .control(rejected, "reject", "{\"reason\":\"not true\"}")
              .json()
              .get("state")
              .asText())
          .isEqualTo("tombstoned");
      assertThat(memories.ids("When are quarterly business reviews?", 20))
          .contains(approved)
          .doesNotContain(rejected);
      assertThat(memories.control(approved, "approve", null).status()).isEqualTo(409);
      assertThat(
              memories.send("GET", "/candidates", null).json().get("data").findValuesAsText("id"))
          .doesNotContain(approved, rejected);
      assertThat(transitions(memories.provenance(approved)))
          .containsExactly("none>candidate:encode", "candidate>durable:approve");
      assertThat(transitions(memories.provenance(rejected)))
          .containsExactly("none>candidate:encode", "candidate>tombstoned:reject");
    } finally {
      http.patch("/api/memory/settings")
          .bearer(adminKey)
          .json("{\"writeMode\":\"direct\"}")
          .send();
    }
  }

  @Test
  void aCandidateCanBeDeletedAndASuppressedMemoryToo() {
    String suppressed = memories.remember("The old office wifi password rotates monthly");
    memories.control(suppressed, "suppress", null);
    assertThat(memories.delete(suppressed).json().get("state").asText()).isEqualTo("tombstoned");
    assertThat(transitions(memories.provenance(suppressed)))
        .containsExactly(
            "none>durable:encode", "durable>suppressed:suppress", "suppressed>tombstoned:delete");
  }

  @Test
  void writeModeNeedsAnAdminAndAPaidPlan() {
    String founder = server.createOrganization("founder");
    String founderAdmin = server.apiKey(founder, 100, "admin");
    Http.Response refused = http.patch("/api/memory/settings")
        .bearer(founderAdmin)
        .json("{\"writeMode\":\"candidate_review\"}")
        .send();
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().get("message").asText()).contains("paid plan");
    JsonNode settings =
        http.get("/api/memory/settings").bearer(founderAdmin).send().json().get("settings");
    assertThat(settings.get("writeMode").asText()).isEqualTo("direct");
    assertThat(settings.get("availableWriteModes")).hasSize(1);

    var member = server.signedIn(org, "member-memory@example.com", "member");
    Http.Response byMember = member
        .on(http.patch("/api/memory/settings").json("{\"writeMode\":\"direct\"}"))
        .send();
    assertThat(byMember.status()).isEqualTo(403);
    assertThat(member.on(http.get("/api/memory/settings")).send().status()).isEqualTo(200);
    var owner = server.signedIn(org, "owner-memory@example.com", "owner");
    Http.Response bad = owner
        .on(http.patch("/api/memory/settings").json("{\"writeMode\":\"later\"}"))
        .send();
    assertThat(bad.status()).isEqualTo(400);
    assertThat(owner
            .on(http.patch("/api/memory/settings").json("{\"writeMode\":\"direct\"}"))
            .send()
            .status())
        .isEqualTo(200);
  }
}
