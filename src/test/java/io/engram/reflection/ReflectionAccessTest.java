package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Who may read, run, undo and configure reflection; and every bad input answered 400 in the /api shape. */
class ReflectionAccessTest extends ServerTest {
  static ReflectionClient org;
  static JsonNode audit;
  static String eventId;

  static final List<String> READS = List.of(
      "/settings",
      "/events",
      "/audits",
      "/metrics",
      "/metrics/summary",
      "/metrics/trend",
      "/metrics/distribution");

  @BeforeAll
  static void organizationWithOneRun() {
    org = ReflectionClient.create(server, "growth");
    org.remember("Soylent ships from Rotterdam", "Soylent");
    org.remember("Soylent ship from Rotterdam", "Soylent"); // nearly the same words
    audit = org.run(false);
    eventId = org.events("run=" + audit.get("id").asText()).getFirst().get("id").asText();
  }

  Http.Response as(String credential, String method, String path, String json) {
    Http.Call call = http.method(method, ReflectionClient.BASE + path).bearer(credential);
    return (json == null ? call : call.json(json)).send();
  }

  @Test
  void everyRouteNeedsAuthentication() {
    for (String path : READS) {
      Http.Response response = http.get(ReflectionClient.BASE + path).send();
      assertThat(response.status()).as(path).isEqualTo(401);
      assertThat(response.json().get("success").asBoolean()).isFalse();
    }
    assertThat(http.post(ReflectionClient.BASE + "/run").json("{}").send().status())
        .isEqualTo(401);
    assertThat(http.post(ReflectionClient.BASE + "/undo").json("{}").send().status())
        .isEqualTo(401);
    assertThat(http.patch(ReflectionClient.BASE + "/settings").json("{}").send().status())
        .isEqualTo(401);
  }

  @Test
  void readersReadButOnlyOwnersAdminsAndControlTokensRunAndUndo() {
    String reader = server.token(org.org(), null, "memory:read");
    String controller = server.token(org.org(), null, "memory:read", "memory:control");
    String plainKey = server.apiKey(org.org(), 1000, "inference");
    TestServer.Session member = server.signedIn(org.org(), "member@soylent.test", "member");
    TestServer.Session owner = server.signedIn(org.org(), "owner@soylent.test", "owner");
    for (String path : READS) {
      assertThat(as(reader, "GET", path, null).status()).as(path).isEqualTo(200);
      assertThat(as(plainKey, "GET", path, null).status()).as(path).isEqualTo(200);
      assertThat(member.on(http.get(ReflectionClient.BASE + path)).send().status())
          .as(path)
          .isEqualTo(200);
    }
    assertThat(as(reader, "POST", "/run", "{}").json().get("error").asText()).isNotBlank();
    assertThat(as(reader, "POST", "/run", "{}").status()).isEqualTo(403);
    assertThat(as(plainKey, "POST", "/run", "{}").status()).isEqualTo(403);
    assertThat(member
            .on(http.post(ReflectionClient.BASE + "/run").json("{}"))
            .send()
            .status())
        .isEqualTo(403);
    assertThat(as(controller, "PATCH", "/settings", "{\"enabled\":false}").status())
        .isEqualTo(403);
    assertThat(member
            .on(http.patch(ReflectionClient.BASE + "/settings").json("{\"enabled\":false}"))
            .send()
            .status())
        .isEqualTo(403);

    Http.Response byToken = as(controller, "POST", "/run", "{\"dryRun\":true}");
    assertThat(byToken.status()).as(byToken.text()).isEqualTo(202);
    org.awaitAudit(byToken.json().get("runId").asText());
    Http.Response byOwner = owner
        .on(http.post(ReflectionClient.BASE + "/run").json("{\"dryRun\":true}"))
        .send();
    assertThat(byOwner.status()).as(byOwner.text()).isEqualTo(202);
    JsonNode ownerAudit = org.awaitAudit(byOwner.json().get("runId").asText());
    assertThat(ownerAudit.at("/trigger/userId").asText())
        .isEqualTo(owner.user().get("id").asText());
    // A session without the CSRF token cannot change anything.
    assertThat(http.post(ReflectionClient.BASE + "/run")
            .header("Cookie", "engram_session=" + owner.cookie())
            .json("{}")
            .send()
            .status())
        .isEqualTo(403);
  }

  @Test
  void tokensBoundToAgentsAreRefusedBecauseReflectionSpansEveryAgent() {
    String bound = server.token(org.org(), List.of("sales"), "memory:read", "memory:control");
    Http.Response response = as(bound, "GET", "/metrics", null);
    assertThat(response.status()).isEqualTo(403);
    assertThat(response.text()).contains("agent");
    assertThat(as(bound, "POST", "/run", "{}").status()).isEqualTo(403);
  }

  @Test
  void provenanceNamesNoMemoryOfAnotherAgent() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    String shared = org.remember("Wonka's chocolate river is inspected weekly", "Wonka");
    assertThat(server
            .http
            .patch("/api/memory/settings")
            .bearer(org.adminKey())
            .json("{\"writeMode\":\"candidate_review\"}")
            .send()
            .status())
        .isEqualTo(200);
    String salesCandidate = server
        .http
        .post("/v1/memory/agents/sales")
        .bearer(org.token())
        .json("{\"text\":\"Wonka's chocolate river is inspected weekly.\",\"subject\":\"Wonka\"}")
        .send()
        .json()
        .get("id")
        .asText();
    JsonNode audit = org.run(false);
    assertThat(org.changes(audit, "promote"))
        .extracting(e -> e.get("memoryId").asText())
        .containsExactly(salesCandidate);
    // At the organization level the shared memory's provenance does not name the sales agent's
    // memory.
    assertThat(org.provenance(shared).at("/reflection/events")).isEmpty();
    JsonNode inSales = server
        .http
        .get("/v1/memory/agents/sales/" + shared + "/provenance")
        .bearer(org.token())
        .send()
        .json();
    assertThat(inSales.at("/reflection/events/0/memoryId").asText()).isEqualTo(salesCandidate);
  }

  @Test
  void anotherOrganizationsRunsAndEventsDoNotExist() {
    ReflectionClient other = ReflectionClient.create(server, "growth");
    String runId = audit.get("id").asText();
    assertThat(other.get("/audits/" + runId).status()).isEqualTo(404);
    assertThat(other.get("/events/" + eventId).status()).isEqualTo(404);
    assertThat(other.undoRun(runId).status()).isEqualTo(404);
    assertThat(other.undoEvent(eventId).status()).isEqualTo(404);
    assertThat(other.get("/events?run=" + runId).json().get("events")).isEmpty();
    assertThat(other.get("/audits").json().get("audits")).isEmpty();
    assertThat(org.state(org.events("run=" + runId).getFirst().get("memoryId").asText()))
        .isEqualTo("suppressed");
  }

  @Test
  void badInputsAreClear400sAndLeaveTheSettingsAlone() {
    Map<String, String> badPatches = Map.of(
        "{\"intervalMinutes\":5}", "intervalMinutes",
        "{\"intervalMinutes\":\"daily\"}", "intervalMinutes",
        "{\"consolidation\":{\"similarityThreshold\":1.5}}", "consolidation.similarityThreshold",
        "{\"decay\":{\"action\":\"delete\"}}", "decay.action",
        "{\"decay\":{\"belowForDays\":0}}", "decay.belowForDays",
        "{\"candidates\":{\"expireAfterDays\":2.5}}", "candidates.expireAfterDays",
        "{\"conflicts\":{\"enabled\":\"yes\"}}", "conflicts.enabled",
        "{\"consolidation\":true}", "consolidation",
        "{\"sleep\":true}", "sleep",
        "{\"decay\":{\"half_life\":3}}", "decay.half_life");
    String before = org.get("/settings").json().get("settings").toString();
    badPatches.forEach((body, field) -> {
      Http.Response response = org.patchSettings(body);
      assertThat(response.status()).as(body).isEqualTo(400);
      assertThat(response.json().get("success").asBoolean()).isFalse();
      assertThat(response.json().get("validationErrors").toString())
          .as(body)
          .contains("\"" + field + "\"");
    });
    Http.Response many =
        org.patchSettings("{\"intervalMinutes\":1,\"decay\":{\"activationThreshold\":-1}}");
    assertThat(many.json().get("validationErrors")).hasSize(2);
    assertThat(org.patchSettings("[1]").status()).isEqualTo(400);
    assertThat(org.patchSettings("{").status()).isEqualTo(400);
    assertThat(org.get("/settings").json().get("settings").toString()).isEqualTo(before);

    assertThat(org.post("/run", "{\"processes\":[\"dreaming\"]}").status()).isEqualTo(400);
    assertThat(org.post("/run", "{\"processes\":[]}").status()).isEqualTo(400);
    assertThat(org.post("/run", "{\"dryRun\":\"yes\"}").status()).isEqualTo(400);
    assertThat(org.post("/run", "{\"force\":true}").status()).isEqualTo(400);
    assertThat(org.post("/undo", "{}").status()).isEqualTo(400);
    assertThat(org.post("/undo", "{\"runId\":\"a\",\"eventId\":\"b\"}").status())
        .isEqualTo(400);
    assertThat(org.post("/undo", "{\"runId\":\"rrun_missing\"}").status()).isEqualTo(404);
    for (String query : List.of(
        "/events?kind=sleep",
        "/events?change=delete",
        "/events?limit=0",
        "/events?cursor=x",
        "/events?since=yesterday",
        "/audits?limit=1000",
        "/metrics/summary?window=3w",
        "/metrics/summary?window=400d",
        "/metrics/trend?window=1d&bucket=2d",
        "/metrics/trend?window=365d&bucket=1h",
        "/metrics/distribution?state=forgotten")) {
      Http.Response response = org.get(query);
      assertThat(response.status()).as(query + " " + response.text()).isEqualTo(400);
      assertThat(response.json().get("message").asText()).as(query).isNotBlank();
    }
  }

  @Test
  void settingsPatchMergesAndIsReadBack() {
    ReflectionClient fresh = ReflectionClient.create(server, "growth");
    JsonNode defaults = fresh.get("/settings").json();
    assertThat(defaults.at("/settings/enabled").asBoolean()).isTrue();
    assertThat(defaults.at("/settings/intervalMinutes").asInt()).isEqualTo(1440);
    assertThat(defaults.get("nextRunAt").asText()).isNotBlank();
    Http.Response patched =
        fresh.patchSettings("{\"intervalMinutes\":60,\"decay\":{\"belowForDays\":10},"
            + "\"candidates\":{\"autoApproveConfidence\":null}}");
    assertThat(patched.status()).as(patched.text()).isEqualTo(200);
    JsonNode settings = fresh.get("/settings").json().get("settings");
    assertThat(settings.get("intervalMinutes").asInt()).isEqualTo(60);
    assertThat(settings.at("/decay/belowForDays").asInt()).isEqualTo(10);
    assertThat(settings.at("/decay/activationThreshold").asDouble()).isEqualTo(0.2);
    assertThat(settings.at("/candidates/autoApproveConfidence").isNull()).isTrue();
    assertThat(
            fresh.patchSettings("{\"enabled\":false}").json().get("nextRunAt").isNull())
        .isTrue();
  }
}
