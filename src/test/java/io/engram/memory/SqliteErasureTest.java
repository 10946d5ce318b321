package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.Test;

/**
 * Erasure on one SQLite node by a filter (no end user): a metadata filter erases exactly the
 * memories it matches, an agent's erasure of everything takes only that agent's, and each
 * receipt checks.
 */
class SqliteErasureTest {

  private static JsonNode completed(TestServer server, String token, Http.Response started) {
    assertThat(started.status()).as(started.text()).isEqualTo(202);
    return Erasing.completed(server, token, started.header("Location"));
  }

  @Test
  void aFilterErasesWhatItMatchesAndAnAgentsEverythingIsOnlyTheAgents() {
    try (TestServer server =
        TestServer.builder().env("RATE_LIMIT_REQUESTS", "100000").start()) {
      String org = server.createOrganization("growth");
      String token = server.token(org, null, "memory:read", "memory:write", "memory:delete");
      for (int i = 0; i < 5; i++) {
        Http.Response encoded = server
            .http
            .post("/v1/memory")
            .bearer(token)
            .json("{\"text\":\"Project note " + i + " about the launch plan.\","
                + "\"metadata\":{\"project\":\"" + (i < 3 ? "apollo" : "gemini") + "\"}}")
            .send();
        assertThat(encoded.status()).as(encoded.text()).isEqualTo(201);
      }
      Http.Response helpdesk = server
          .http
          .post("/v1/memory/agents/helpdesk")
          .bearer(token)
          .json("{\"text\":\"The helpdesk closes at five.\"}")
          .send();
      assertThat(helpdesk.status()).isEqualTo(201);

      JsonNode apollo = completed(
          server,
          token,
          server
              .http
              .post("/v1/memory/erase")
              .bearer(token)
              .json("{\"filters\":{\"project\":\"apollo\"}}")
              .send());
      assertThat(apollo.at("/receipt/memories/count").asInt()).isEqualTo(3);
      assertThat(apollo.at("/receipt/userId").isNull()).isTrue();
      String left = Json.write(server
          .http
          .post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"launch plan project note\",\"limit\":20}")
          .send()
          .json());
      assertThat(left)
          .contains("Project note 3", "Project note 4")
          .doesNotContain("Project note 0", "Project note 1", "Project note 2");

      // Inside an agent, nothing narrows it: everything must be said.
      assertThat(server
              .http
              .post("/v1/memory/agents/helpdesk/erase")
              .bearer(token)
              .json("{}")
              .send()
              .status())
          .isEqualTo(400);
      JsonNode agent = completed(
          server,
          token,
          server
              .http
              .post("/v1/memory/agents/helpdesk/erase")
              .bearer(token)
              .json("{\"everything\":true}")
              .send());
      assertThat(agent.at("/receipt/memories/count").asInt()).isEqualTo(1);
      assertThat(agent.get("agent").asText()).isEqualTo("helpdesk");
      // An agent's erasure is seen from the agent and the organization's level, not another agent.
      String id = agent.get("id").asText();
      assertThat(server
              .http
              .get("/v1/memory/agents/billing/erasures/" + id)
              .bearer(token)
              .send()
              .status())
          .isEqualTo(404);
      JsonNode check = server
          .http
          .post("/v1/memory/erasures/" + id + "/verify")
          .bearer(token)
          .send()
          .json();
      assertThat(check.get("verified").asBoolean()).as(check.toString()).isTrue();
      assertThat(Json.write(server
              .http
              .post("/v1/memory/retrieve")
              .bearer(token)
              .json("{\"query\":\"launch plan project note\",\"limit\":20}")
              .send()
              .json()))
          .contains("Project note 3");
    }
  }
}
