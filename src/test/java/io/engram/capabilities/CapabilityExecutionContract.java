package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Executable entries: access_org_analytics has a handler (real figures from the organization's
 * data, within its config); metadata entries answer 501; a capability must be enabled to run.
 * Runs on SQLite and PostgreSQL: the analytics are SQL over both.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CapabilityExecutionContract {
  static final String ANALYTICS_CONFIG =
      "{\"allowedMetrics\":[\"assistants\",\"assistants_by_type\","
          + "\"capability_adoption\",\"capability_changes\",\"members\",\"members_by_role\"],\"dataRetention\":30}";
  TestServer server;
  Assistants key;
  Assistants member;
  String shared;
  String personal;

  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
    String org = server.createOrganization("seed");
    key = Assistants.withKey(server, server.apiKey(org, 1000, "inference", "admin"));
    TestServer.Session session = server.signedIn(org, "analyst@x.example", "member");
    member = Assistants.as(server, session);
    shared = key.created("Analyst", "org_shared", null);
    personal = member.created("Mine", "employee_personal", null);
    Http.Response enabled = key.patch(
        shared,
        "{\"capabilities\":[\"access_org_analytics\",\"track_orders\"],"
            + "\"capabilityConfigs\":{\"access_org_analytics\":" + ANALYTICS_CONFIG + "}}");
    assertThat(enabled.status()).as(enabled.text()).isEqualTo(200);
  }

  @AfterAll
  void stop() {
    server.close();
  }

  static Http.Response execute(
      Assistants caller, String assistantId, String capabilityId, String body) {
    return caller.send(caller
        .http
        .post("/api/assistants/" + assistantId + "/capabilities/" + capabilityId + "/execute")
        .json(body));
  }

  /** Engram's built-in handlers; every other capability needs an organization's action bridge. */
  static final java.util.Set<String> BUILT_IN = java.util.Set.of(
      "access_org_analytics",
      "search_org_knowledge",
      "remember_preferences",
      "track_team_decisions",
      "take_meeting_notes",
      "set_reminders",
      "manage_tasks");

  @Test
  void theRegistryMarksOnlyCapabilitiesWithAHandlerExecutable() {
    for (JsonNode entry : key.registry("").get("capabilities")) {
      assertThat(entry.get("executable").asBoolean())
          .as(entry.get("id").asText())
          .isEqualTo(BUILT_IN.contains(entry.get("id").asText()));
    }
  }

  @Test
  void analyticsReportTheOrganizationsOwnFigures() {
    Http.Response response = execute(member, shared, "access_org_analytics", "{}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode metrics = response.json().at("/result/metrics");
    assertThat(metrics.get("assistants").asInt()).isEqualTo(2);
    assertThat(metrics.at("/assistants_by_type/org_shared").asInt()).isEqualTo(1);
    assertThat(metrics.at("/assistants_by_type/employee_personal").asInt()).isEqualTo(1);
    assertThat(metrics.at("/capability_adoption/answer_questions").asInt()).isEqualTo(2);
    assertThat(metrics.at("/capability_adoption/access_org_analytics").asInt()).isEqualTo(1);
    assertThat(metrics.get("capability_changes").asInt()).isEqualTo(1);
    assertThat(metrics.get("members").asInt()).isEqualTo(1);
    assertThat(metrics.at("/members_by_role/member").asInt()).isEqualTo(1);
    assertThat(response.json().at("/result/window/to").asText())
        .isEqualTo(server.clock.instant().toString());

    Http.Response some =
        execute(key, shared, "access_org_analytics", "{\"arguments\":{\"metrics\":[\"members\"]}}");
    assertThat(some.json().at("/result/metrics").size()).isEqualTo(1);
  }

  @Test
  void changesOlderThanTheRetentionWindowAreNotReported() {
    // Its own organization, so the figures of the other tests stay as they are.
    Assistants owner =
        Assistants.withKey(server, server.apiKey(server.createOrganization("seed"), 1000, "admin"));
    String other = owner.created("Later", "org_shared", null);
    owner.patch(
        other,
        "{\"capabilities\":[\"access_org_analytics\"],\"capabilityConfigs\":{\"access_org_analytics\":"
            + ANALYTICS_CONFIG.replace("30", "1") + "}}");
    server.clock.advance(Duration.ofDays(2));
    JsonNode metrics =
        execute(owner, other, "access_org_analytics", "{}").json().at("/result/metrics");
    assertThat(metrics.get("capability_changes").asInt()).isZero();
  }

  @Test
  void theConfigLimitsWhatMayBeAskedFor() {
    Http.Response notAllowed = execute(
        key, shared, "access_org_analytics", "{\"arguments\":{\"metrics\":[\"api_keys\"]}}");
    assertThat(notAllowed.status()).isEqualTo(403);
    assertThat(notAllowed.json().get("message").asText())
        .startsWith("Metric 'api_keys' is not in this assistant's");
    for (String bad : new String[] {
      "{\"arguments\":{\"metrics\":[]}}",
      "{\"arguments\":{\"metrics\":[1]}}",
      "{\"arguments\":[]}",
      "{\"arguments\":null}",
      "{\"args\":{}}",
      "[]"
    }) {
      assertThat(execute(key, shared, "access_org_analytics", bad).status())
          .as(bad)
          .isEqualTo(400);
    }
  }

  @Test
  void onlyEnabledExecutableCapabilitiesRun() {
    Http.Response metadata = execute(key, shared, "track_orders", "{}");
    assertThat(metadata.status()).isEqualTo(501);
    assertThat(metadata.json().get("error").asText()).isEqualTo("Not implemented");
    Http.Response notEnabled = execute(member, personal, "access_org_analytics", "{}");
    assertThat(notEnabled.status()).isEqualTo(403);
    assertThat(notEnabled.json().get("message").asText())
        .isEqualTo(
            "Capability Access Organization Analytics (access_org_analytics) is not enabled on assistant "
                + personal);
    assertThat(execute(key, shared, "teleport", "{}").status()).isEqualTo(404);
    Assistants stranger =
        Assistants.withKey(server, server.apiKey(server.createOrganization("seed"), 1000, "admin"));
    assertThat(execute(stranger, shared, "access_org_analytics", "{}").status()).isEqualTo(404);
  }
}
