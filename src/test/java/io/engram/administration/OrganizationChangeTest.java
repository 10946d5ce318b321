package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** PATCH /v1/organizations/{id}: a plan or budget change, and its consequences, applied at once. */
class OrganizationChangeTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response change(String org, String json) {
    return server.asOperator(server.http.patch("/v1/organizations/" + org).json(json));
  }

  private static List<String> capabilities(String key, String assistant) {
    JsonNode body = server
        .http
        .get("/api/assistants/" + assistant + "/capabilities")
        .bearer(key)
        .send()
        .json();
    List<String> ids = new ArrayList<>();
    body.get("capabilities").forEach(id -> ids.add(id.asText()));
    return ids;
  }

  @Test
  void aLowerPlanFitsAssistantsLimitsAndConfigurationAtOnce() {
    String org = server.createOrganization("seed");
    String key = server.apiKey(org, 1000, "admin");
    String assistant = server
        .http
        .post("/api/assistants")
        .bearer(key)
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send()
        .json()
        .at("/assistant/_id")
        .asText();
    Http.Response enabled = server
        .http
        .patch("/api/assistants/" + assistant + "/capabilities")
        .bearer(key)
        .json("{\"capabilities\":[\"search_org_knowledge\",\"summarize_org_updates\","
            + "\"track_orders\",\"manage_tasks\",\"analyze_documents\",\"generate_quotes\"],"
            + "\"capabilityConfigs\":{\"generate_quotes\":{\"currency\":\"EUR\"}}}")
        .send();
    assertThat(enabled.status()).as(enabled.text()).isEqualTo(200);
    Http.Response override = server.asOperator(server
        .http
        .patch("/v1/organizations/" + org + "/config")
        .json("{\"quotas\":{\"max_concurrent_requests\":10}}"));
    assertThat(override.status()).isEqualTo(200);

    Http.Response changed = change(org, "{\"plan\":\"spark\"}");
    assertThat(changed.status()).as(changed.text()).isEqualTo(200);
    assertThat(changed.json().get("plan").asText()).isEqualTo("spark");
    assertThat(changed.json().at("/consequences/assistants_changed").asInt()).isEqualTo(1);

    // Seed-tier generate_quotes goes; past Spark's three, the last enabled go too.
    assertThat(capabilities(key, assistant))
        .containsExactly("answer_questions", "search_org_knowledge", "summarize_org_updates");
    JsonNode history = server
        .http
        .get("/api/assistants/" + assistant + "/capabilities/history")
        .bearer(key)
        .send()
        .json()
        .get("history");
    assertThat(history.get(0).toString()).contains("system");

    // The key in hand sees the new plan at once, and the configuration follows it: the override
    // above Spark's five concurrent requests yields to the plan.
    assertThat(server
            .http
            .get("/v1/organizations/" + org)
            .bearer(key)
            .send()
            .json()
            .get("plan")
            .asText())
        .isEqualTo("spark");
    JsonNode config = server
        .http
        .get("/v1/organizations/" + org + "/config")
        .bearer(key)
        .send()
        .json();
    assertThat(config.at("/quotas/max_concurrent_requests").asInt()).isEqualTo(5);
    assertThat(config.at("/fields/quotas.max_concurrent_requests/source").asText())
        .isEqualTo("plan");
    assertThat(config.at("/quotas/max_tokens_per_request").asInt()).isEqualTo(2048);

    // Memory's candidate review is for paid plans; Free is not one.
    change(org, "{\"plan\":\"free\"}");
    JsonNode memory = server.http.get("/api/memory/settings").bearer(key).send().json();
    assertThat(memory.at("/settings/availableWriteModes").toString()).isEqualTo("[\"direct\"]");

    JsonNode audit = server
        .http
        .get("/v1/organizations/" + org + "/audit")
        .bearer(key)
        .send()
        .json()
        .get("data");
    assertThat(audit.get(0).get("action").asText()).isEqualTo("organization.update");
    assertThat(audit.get(0).at("/detail/before/plan").asText()).isEqualTo("spark");
    assertThat(audit.get(0).at("/detail/after/plan").asText()).isEqualTo("free");
  }

  @Test
  void theContractBudgetIsForGrowthAndAboveAndGoesWithADowngrade() {
    String org = server.createOrganization("growth");
    Http.Response set = change(org, "{\"requests_per_minute\":5000,\"name\":\"Acme Corp\"}");
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(set.json().at("/limits/requests_per_minute").asInt()).isEqualTo(5000);
    assertThat(set.json().get("name").asText()).isEqualTo("Acme Corp");
    Http.Response down = change(org, "{\"plan\":\"seed\"}");
    assertThat(down.json().at("/consequences/requests_per_minute_dropped").asInt())
        .isEqualTo(5000);
    assertThat(down.json().at("/limits/requests_per_minute").asInt()).isEqualTo(200);
    Http.Response refused = change(org, "{\"requests_per_minute\":5000}");
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.json().at("/error/param").asText()).isEqualTo("requests_per_minute");
    change(org, "{\"plan\":\"growth\",\"requests_per_minute\":3000}");
    Http.Response cleared = change(org, "{\"requests_per_minute\":null}");
    assertThat(cleared.json().at("/limits/requests_per_minute").asInt()).isEqualTo(1000);
  }

  @Test
  void onlyTheOperatorChangesAnOrganizationAndBadInputIsA400() {
    String org = server.createOrganization("seed");
    String admin = server.apiKey(org, 1000, "admin");
    Http.Response byAdmin = server
        .http
        .patch("/v1/organizations/" + org)
        .bearer(admin)
        .json("{\"plan\":\"dedicated\"}")
        .send();
    assertThat(byAdmin.status()).isEqualTo(403);
    String[][] cases = {
      {"{\"plan\":\"platinum\"}", "plan"},
      {"{\"plan\":null}", "plan"},
      {"{\"name\":\"  \"}", "name"},
      {"{\"requests_per_minute\":0}", "requests_per_minute"},
      {"{\"owner\":\"me\"}", "owner"},
    };
    for (String[] bad : cases) {
      Http.Response refused = change(org, bad[0]);
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    assertThat(change(org, "{}").status()).isEqualTo(400);
    assertThat(change("org_missing", "{\"plan\":\"free\"}").status()).isEqualTo(404);
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org))
            .json()
            .get("plan")
            .asText())
        .isEqualTo("seed");
  }
}
