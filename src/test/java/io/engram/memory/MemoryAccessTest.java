package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.ServerTest;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who reaches which memory: the scope of each route, other organizations (404), and agent
 * boundaries, including a token bound to one agent probing another by path, header and id.
 */
class MemoryAccessTest extends ServerTest {
  static final List<String> ALL =
      List.of("memory:read", "memory:write", "memory:control", "memory:delete");
  static String org;
  static Memories full;
  static String orgWide;
  static String alphaOwn;
  static String betaOwn;

  /** A route, a body for it, and the scope it needs. */
  record Route(String method, String path, String body, String scope) {}

  @BeforeAll
  static void memories() {
    org = server.createOrganization("growth");
    full = Memories.of(server, server.token(org, null, ALL.toArray(String[]::new)));
    orgWide = full.remember("The support hotline is open from 8 to 18 on weekdays");
    alphaOwn =
        full.inAgent("alpha").remember("Alpha's escalation contact for the hotline is Priya");
    betaOwn = full.inAgent("beta").remember("Beta's escalation contact for the hotline is Omar");
  }

  static List<Route> routes(String id) {
    return List.of(
        new Route("POST", "/retrieve", "{\"query\":\"hotline\"}", "memory:read"),
        new Route("POST", "/recall", "{\"query\":\"hotline\"}", "memory:read"),
        new Route("POST", "/search", "{\"query\":\"hotline\"}", "memory:read"),
        new Route("GET", "/" + id, null, "memory:read"),
        new Route("GET", "/candidates", null, "memory:read"),
        new Route("GET", "/events", null, "memory:read"),
        new Route("POST", "", "{\"text\":\"scope probe\"}", "memory:write"),
        new Route(
            "POST",
            "/events",
            "{\"type\":\"probe\",\"source\":\"test\",\"text\":\"scope probe event\"}",
            "memory:write"),
        new Route("POST", "/" + id + "/reinforce", null, "memory:control"),
        new Route("POST", "/" + id + "/suppress", null, "memory:control"),
        new Route("POST", "/" + id + "/restore", null, "memory:control"),
        new Route("POST", "/" + id + "/approve", null, "memory:control"),
        new Route("POST", "/" + id + "/reject", null, "memory:control"),
        new Route("GET", "/" + id + "/provenance", null, "memory:control"),
        new Route("DELETE", "/" + id, null, "memory:delete"));
  }

  @Test
  void everyRouteNeedsItsScope() {
    for (Route route : routes(orgWide)) {
      String[] others = ALL.stream().filter(s -> !s.equals(route.scope())).toArray(String[]::new);
      Memories without = Memories.of(server, server.token(org, null, others));
      Http.Response response = without.send(route.method(), route.path(), route.body());
      assertThat(response.status()).as(route + " without " + route.scope()).isEqualTo(403);
      assertThat(response.json().get("error").get("code").asText()).isEqualTo("insufficient_scope");
    }
  }

  @Test
  void noCredentialIs401AndAnApiKeyIsNotAMemoryToken() {
    for (Route route : routes(orgWide)) {
      Http.Call call = http.method(route.method(), "/v1/memory" + route.path());
      Http.Response anonymous = (route.body() == null ? call : call.json(route.body())).send();
      assertThat(anonymous.status()).as(route.toString()).isEqualTo(401);
    }
    Memories apiKey = Memories.of(server, server.apiKey(org, 100, "admin"));
    assertThat(apiKey.retrieve("{\"query\":\"hotline\"}").status()).isEqualTo(403);
  }

  @Test
  void anotherOrganizationsMemoriesDoNotExist() {
    String other = server.createOrganization("growth");
    Memories outsider = Memories.of(server, server.token(other, null, ALL.toArray(String[]::new)));
    for (Route route : routes(orgWide)) {
      if (route.path().contains(orgWide)) {
        Http.Response response = outsider.send(route.method(), route.path(), route.body());
        assertThat(response.status()).as(route.toString()).isEqualTo(404);
      }
    }
    assertThat(outsider.ids("support hotline weekdays", 20))
        .doesNotContain(orgWide, alphaOwn, betaOwn);
    assertThat(full.get(orgWide).json().get("state").asText())
        .as("nothing changed")
        .isEqualTo("durable");
  }

  @Test
  void boundariesDecideWhatEachCallSees() {
    assertThat(full.ids("hotline escalation contact", 20))
        .contains(orgWide)
        .doesNotContain(alphaOwn, betaOwn);
    assertThat(full.inAgent("alpha").ids("hotline escalation contact", 20))
        .contains(orgWide, alphaOwn)
        .doesNotContain(betaOwn);
    Http.Response byHeader = full.server()
        .http
        .post("/v1/memory/retrieve")
        .bearer(full.token())
        .header("X-Service-Agent", "beta")
        .json("{\"query\":\"hotline escalation contact\",\"limit\":20}")
        .send();
    assertThat(byHeader.json().get("memories").findValuesAsText("id"))
        .contains(betaOwn, orgWide)
        .doesNotContain(alphaOwn);
    assertThat(full.get(alphaOwn).status())
        .as("an agent's memory is reached in its boundary")
        .isEqualTo(404);
    assertThat(full.inAgent("alpha").get(alphaOwn).json().get("agent").asText()).isEqualTo("alpha");
  }

  @Test
  void aTokenBoundToOneAgentNeverReachesAnother() {
    Memories bound =
        Memories.of(server, server.token(org, List.of("alpha"), ALL.toArray(String[]::new)));
    Http.Response orgLevel = bound.retrieve("{\"query\":\"hotline\"}");
    assertThat(orgLevel.status()).isEqualTo(403);
    assertThat(orgLevel.json().get("error").get("code").asText()).isEqualTo("agent_required");
    for (Route route : routes(betaOwn)) {
      Http.Response byPath = bound.inAgent("beta").send(route.method(), route.path(), route.body());
      assertThat(byPath.status()).as("path " + route).isEqualTo(403);
      assertThat(byPath.json().get("error").get("code").asText()).isEqualTo("agent_not_allowed");
      Http.Call call = server
          .http
          .method(route.method(), "/v1/memory" + route.path())
          .bearer(bound.token())
          .header("X-Service-Agent", "beta");
      assertThat((route.body() == null ? call : call.json(route.body())).send().status())
          .as("header " + route)
          .isEqualTo(403);
    }
    Memories alpha = bound.inAgent("alpha");
    for (Route route : routes(betaOwn)) {
      if (route.path().contains(betaOwn)) {
        assertThat(alpha.send(route.method(), route.path(), route.body()).status())
            .as("beta's id from alpha " + route)
            .isEqualTo(404);
      }
    }
    assertThat(alpha.ids("Beta escalation contact Omar", 50)).doesNotContain(betaOwn);
    assertThat(full.inAgent("beta").get(betaOwn).json().get("state").asText()).isEqualTo("durable");

    String written = alpha.remember("Alpha answers in French on Mondays");
    assertThat(alpha.get(written).json().get("agent").asText()).isEqualTo("alpha");
    assertThat(alpha.control(orgWide, "reinforce", null).status())
        .as("reinforcing a shared memory it used")
        .isEqualTo(200);
    Http.Response suppressShared = alpha.control(orgWide, "suppress", null);
    assertThat(suppressShared.status()).isEqualTo(403);
    assertThat(suppressShared.json().get("error").get("code").asText()).isEqualTo("shared_memory");
    assertThat(alpha.delete(orgWide).status()).isEqualTo(403);
    assertThat(full.get(orgWide).json().get("state").asText()).isEqualTo("durable");
  }

  @Test
  void agentNamesAreCheckedAndMustAgree() {
    Http.Response mismatch = server
        .http
        .post("/v1/memory/agents/alpha/retrieve")
        .bearer(full.token())
        .header("X-Service-Agent", "beta")
        .json("{\"query\":\"x\"}")
        .send();
    assertThat(mismatch.status()).isEqualTo(400);
    assertThat(mismatch.json().get("error").get("param").asText()).isEqualTo("X-Service-Agent");
    for (String bad : Arrays.asList("Alpha", "-x", "a".repeat(65), "al%20pha")) {
      Http.Response response = server
          .http
          .post("/v1/memory/agents/" + bad + "/retrieve")
          .bearer(full.token())
          .json("{\"query\":\"x\"}")
          .send();
      assertThat(response.status()).as(bad).isEqualTo(400);
    }
    Http.Response badHeader = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(full.token())
        .header("X-Service-Agent", "Not Valid")
        .json("{\"query\":\"x\"}")
        .send();
    assertThat(badHeader.status()).isEqualTo(400);
    assertThat(full.inAgent("reinforce").remember("An agent may be called like a verb", Map.of()))
        .as("/v1/memory/agents/reinforce is agent 'reinforce' encoding")
        .startsWith("mem_");
  }
}
