package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two read scopes have routes, and nothing more: {@code knowledge:read} searches the
 * organization's knowledge (retrieval, the search capability) and reads nothing else of the
 * memory; {@code insights:read} reads the organization's figures (usage, reflection metrics) when
 * the token is not bound to agents, and only its own organization's.
 */
class TokenScopesTest {
  static TestServer server;
  static String org;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    org = server.createOrganization("growth");
    String writer = server.token(org, null, "memory:write");
    assertThat(server
            .http
            .post("/v1/memory")
            .bearer(writer)
            .json("{\"text\":\"Acme renews in March\"}")
            .send()
            .status())
        .isEqualTo(201);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void knowledgeReadSearchesAndReadsNothingElse() {
    String knowledge = server.token(org, null, "knowledge:read");
    Http.Response found = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(knowledge)
        .json("{\"query\":\"When does Acme renew?\",\"limit\":3}")
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    assertThat(found.json().at("/memories/0/text").asText()).isEqualTo("Acme renews in March");
    String id = found.json().at("/memories/0/id").asText();
    for (Http.Response refused : List.of(
        server.http.get("/v1/memory").bearer(knowledge).send(),
        server.http.get("/v1/memory/" + id).bearer(knowledge).send(),
        server
            .http
            .post("/v1/memory")
            .bearer(knowledge)
            .json("{\"text\":\"x\"}")
            .send())) {
      assertThat(refused.status()).as(refused.text()).isEqualTo(403);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("insufficient_scope");
    }
    // Without either scope, retrieval is refused, naming both.
    Http.Response none = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(server.token(org, null, "inference:chat"))
        .json("{\"query\":\"Acme\"}")
        .send();
    assertThat(none.status()).isEqualTo(403);
    assertThat(none.json().at("/error/message").asText()).contains("memory:read or knowledge:read");
  }

  @Test
  void insightsReadReadsItsOrganizationsFiguresOnly() {
    String insights = server.token(org, null, "insights:read");
    Http.Response usage =
        server.http.get("/v1/organizations/" + org + "/usage").bearer(insights).send();
    assertThat(usage.status()).as(usage.text()).isEqualTo(200);
    assertThat(usage.json().has("totals")).isTrue();
    Http.Response metrics = server
        .http
        .get("/api/memory/reflection/metrics/summary")
        .bearer(insights)
        .send();
    assertThat(metrics.status()).as(metrics.text()).isEqualTo(200);

    // Another organization's figures do not exist for it; a bound token, or one without the
    // scope, may not read them; it reads no memory.
    String other = server.createOrganization("seed");
    assertThat(server
            .http
            .get("/v1/organizations/" + other + "/usage")
            .bearer(insights)
            .send()
            .status())
        .isEqualTo(404);
    String bound = server.token(org, List.of("sales"), "insights:read");
    Http.Response boundUsage =
        server.http.get("/v1/organizations/" + org + "/usage").bearer(bound).send();
    assertThat(boundUsage.status()).isEqualTo(403);
    assertThat(boundUsage.json().at("/error/code").asText()).isEqualTo("agent_bound_token");
    String without = server.token(org, null, "memory:write");
    assertThat(server
            .http
            .get("/v1/organizations/" + org + "/usage")
            .bearer(without)
            .send()
            .status())
        .isEqualTo(403);
    assertThat(server.http.get("/v1/memory").bearer(insights).send().status()).isEqualTo(403);
    assertThat(server
            .http
            .post("/v1/memory/retrieve")
            .bearer(insights)
            .json("{\"query\":\"Acme\"}")
            .send()
            .status())
        .isEqualTo(403);
  }
}
