package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.module.Job;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.UpstreamServerTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The request log through real HTTP: every model request, answered, failed, refused or served
 * from the cache, keeps its story (deployment, attempts, status, latency, tokens, cost, memories
 * with their scores), found by the X-Request-Id its response carried; contents only when the
 * organization turns them on, sealed at rest; filters and a cursor; another organization's
 * request is not found; the plan's retention purges.
 */
class RequestLogTest extends UpstreamServerTest {

  private static JsonNode request(PricedOrganization org, String id) {
    Http.Response found = server
        .http
        .get("/v1/organizations/" + org.id() + "/requests/" + id)
        .bearer(org.admin())
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    return found.json();
  }

  private static JsonNode list(PricedOrganization org, String query) {
    Http.Response listed = server
        .http
        .get("/v1/organizations/" + org.id() + "/requests" + query)
        .bearer(org.admin())
        .send();
    assertThat(listed.status()).as(listed.text()).isEqualTo(200);
    return listed.json();
  }

  @Test
  void anAnsweredRequestKeepsItsWholeStoryAndItsMemoriesWithTheirScores() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String token = server.tokenWithEveryScope(org.id());
    String memory = org.remember(token, "The office wifi password is on the fridge.");
    Http.Response answer = org.chat(token, "/v1/chat/completions");
    assertThat(answer.status()).isEqualTo(200);
    Http.Response asked = server
        .http
        .post("/v1/chat/completions")
        .bearer(token)
        .json("{\"model\":\"priced\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"Where is the office wifi password?\"}]}")
        .send();
    assertThat(asked.status()).isEqualTo(200);
    JsonNode record = request(org, asked.header("X-Request-Id"));
    assertThat(record.path("model").asText()).isEqualTo("priced");
    assertThat(record.path("route").asText()).isEqualTo("/v1/chat/completions");
    assertThat(record.path("status").asInt()).isEqualTo(200);
    assertThat(record.path("attempts").asInt()).isEqualTo(1);
    assertThat(record.path("deployment").asText()).startsWith("dep_");
    assertThat(record.path("completion_tokens").asInt()).isEqualTo(5);
    assertThat(record.path("cost_usd").asDouble())
        .isCloseTo(PricedOrganization.REQUEST, within(1e-12));
    assertThat(record.at("/latency_ms/total").asLong())
        .isGreaterThanOrEqualTo(record.at("/latency_ms/queue").asLong());
    assertThat(record.at("/latency_ms/first_token").isNumber()).isTrue();
    assertThat(record.at("/memories/0/id").asText()).isEqualTo(memory);
    assertThat(record.at("/memories/0/score").asDouble()).isPositive();
    assertThat(record.path("memory_tokens").asInt()).isPositive();
    // Contents are not kept unless the organization asks.
    assertThat(record.path("messages").isNull()).isTrue();
    assertThat(record.path("answer").isNull()).isTrue();
  }

  @Test
  void contentsAreKeptOnlyWhenTurnedOnAndSealedAtRest() throws Exception {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    org.configure("{\"request_log\":{\"contents\":true}}");
    Http.Response answer = org.chat();
    JsonNode record = request(org, answer.header("X-Request-Id"));
    // The client's messages as it sent them: an array of its objects, nothing of Engram's.
    assertThat(record.path("messages").isArray()).as(record.toString()).isTrue();
    assertThat(record.at("/messages/0/role").asText()).isEqualTo("user");
    assertThat(record.at("/messages/0/content").asText()).isEqualTo("hello");
    assertThat(record.path("messages").toString()).doesNotContain("tooling");
    assertThat(record.path("answer").asText()).isEqualTo("Hello from the upstream.");
    // The list leaves contents out.
    assertThat(list(org, "").at("/data/0").has("messages")).isFalse();
    try (Connection db = DriverManager.getConnection(server.jdbcUrl());
        ResultSet row = db.createStatement()
            .executeQuery("SELECT messages_sealed, answer_sealed FROM request_log WHERE id = '"
                + answer.header("X-Request-Id") + "'")) {
      assertThat(row.next()).isTrue();
      assertThat(row.getString(1)).doesNotContain("hello");
      assertThat(row.getString(2)).doesNotContain("upstream");
    }
  }

  @Test
  void failedRefusedAndCachedRequestsAreLoggedAndTheListFiltersAndPages() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    upstream.script(FakeUpstream.Script.error(503, "{\"error\":{\"message\":\"down\"}}", null));
    Http.Response failed = org.chat();
    assertThat(failed.status()).isGreaterThanOrEqualTo(500);
    JsonNode failure = request(org, failed.header("X-Request-Id"));
    assertThat(failure.path("status").asInt()).isEqualTo(failed.status());
    assertThat(failure.path("error_code").asText()).startsWith("upstream_");
    assertThat(failure.path("cost_usd").asDouble()).isZero();
    upstream.script(FakeUpstream.Script.NORMAL);

    org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":"
        + 2 * PricedOrganization.REQUEST + "}");
    assertThat(org.chat().status()).isEqualTo(200);
    assertThat(org.chat().status()).isEqualTo(200);
    Http.Response refused = org.chat();
    assertThat(refused.status()).isEqualTo(429);
    JsonNode refusal = request(org, refused.header("X-Request-Id"));
    assertThat(refusal.path("error_code").asText()).isEqualTo("budget_exceeded");
    assertThat(refusal.path("attempts").asInt()).isZero();

    JsonNode answered = list(org, "?status=200&model=priced");
    assertThat(answered.path("data")).hasSize(2);
    JsonNode first = list(org, "?limit=2");
    assertThat(first.path("has_more").asBoolean()).isTrue();
    assertThat(first.at("/data/0/id").asText()).isEqualTo(refused.header("X-Request-Id"));
    JsonNode rest = list(org, "?limit=2&after=" + first.path("next_cursor").asText());
    assertThat(rest.path("has_more").asBoolean()).isFalse();
    assertThat(rest.path("data")).hasSize(2);
    assertThat(rest.at("/data/1/id").asText()).isEqualTo(failed.header("X-Request-Id"));
    Http.Response bad = server
        .http
        .get("/v1/organizations/" + org.id() + "/requests?cache=sometimes")
        .bearer(org.admin())
        .send();
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().at("/error/param").asText()).isEqualTo("cache");
  }

  @Test
  void anotherOrganizationsRequestIsNotFoundAndTheRetentionPurges() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    PricedOrganization other = PricedOrganization.create(server, "growth", upstream);
    String id = org.chat().header("X-Request-Id");
    request(org, id);
    for (String path : List.of(
        "/v1/organizations/" + other.id() + "/requests/" + id,
        "/v1/organizations/" + org.id() + "/requests/" + id,
        "/v1/organizations/" + org.id() + "/requests")) {
      assertThat(server.http.get(path).bearer(other.admin()).send().status()).isEqualTo(404);
    }
    assertThat(server
            .http
            .get("/v1/organizations/" + org.id() + "/requests")
            .bearer(org.key())
            .send()
            .status())
        .isEqualTo(403);
    Job purge = purgeJob();
    purge.work().run();
    request(org, id); // growth keeps 30 days
    assertThat(goneAfter(Duration.ofDays(31), purge, org, id)).isTrue();
  }

  @Test
  void aRetentionPolicyForConversationsKeepsTheLogShorterThanThePlan() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    String id = org.chat().header("X-Request-Id");
    request(org, id);
    // A policy that keeps its newest conversations at any age does not shorten the log.
    setPolicies(org, "{\"type\":\"conversation_history\",\"max_age_days\":1,\"keep_latest\":5}");
    assertThat(goneAfter(Duration.ofDays(4), purgeJob(), org, id)).isFalse();
    setPolicies(org, "{\"type\":\"conversation_history\",\"max_age_days\":3}");
    assertThat(goneAfter(Duration.ofDays(2), purgeJob(), org, id)).isFalse();
    assertThat(goneAfter(Duration.ofDays(4), purgeJob(), org, id)).isTrue();
  }

  /**
   * Embeddings run the same stages as every model call (issue 64): an answered call is kept with
   * its deployment, tokens and cost, and a failed one with its status and error, charged nothing.
   */
  @Test
  void embeddingsAreLoggedAsEveryModelCallIs() {
    PricedOrganization org = PricedOrganization.create(server, "growth", upstream);
    Http.Response embedded = embed(org, "[\"one\",\"two\"]");
    assertThat(embedded.status()).as(embedded.text()).isEqualTo(200);
    JsonNode record = request(org, embedded.header("X-Request-Id"));
    assertThat(record.path("route").asText()).isEqualTo("/v1/embeddings");
    assertThat(record.path("model").asText()).isEqualTo("embedder");
    assertThat(record.path("status").asInt()).isEqualTo(200);
    assertThat(record.path("error_code").isNull()).isTrue();
    assertThat(record.path("deployment").asText()).startsWith("dep_");
    assertThat(record.path("prompt_tokens").asInt()).isEqualTo(14);
    assertThat(record.path("completion_tokens").asInt()).isZero();
    assertThat(record.path("cost_usd").asDouble())
        .isCloseTo(2 * PricedOrganization.EMBEDDING, within(1e-12));

    upstream.script(FakeUpstream.Script.error(500, "{\"error\":{\"message\":\"down\"}}", null));
    try {
      Http.Response failed = embed(org, "\"three\"");
      assertThat(failed.status()).as(failed.text()).isEqualTo(502); // the provider's, not ours
      assertThat(failed.json().at("/error/type").asText()).isNotEqualTo("server_error");
      JsonNode failure = request(org, failed.header("X-Request-Id"));
      assertThat(failure.path("status").asInt()).isEqualTo(failed.status());
      assertThat(failure.path("error_code").asText()).isNotEmpty();
      assertThat(failure.path("prompt_tokens").asInt()).isZero();
      assertThat(failure.path("cost_usd").asDouble()).isZero();
    } finally {
      upstream.script(FakeUpstream.Script.NORMAL);
    }
  }

  private static Http.Response embed(PricedOrganization org, String input) {
    return server
        .http
        .post("/v1/embeddings")
        .bearer(org.key())
        .json("{\"model\":\"embedder\",\"input\":" + input + "}")
        .send();
  }

  private void setPolicies(PricedOrganization org, String policy) {
    Http.Response set = server
        .http
        .post("/v1/organizations/" + org.id() + "/retention")
        .bearer(org.admin())
        .json("{\"policies\":[" + policy + "]}")
        .send();
    assertThat(set.status()).as(set.text()).isIn(200, 201);
  }

  private Job purgeJob() {
    return server.engram.modules().stream()
        .flatMap(module -> module.jobs().stream())
        .filter(job -> job.name().startsWith("purge requests"))
        .findFirst()
        .orElseThrow();
  }

  /** Whether the request is gone after the purge runs {@code later} than now (then now again). */
  private boolean goneAfter(Duration later, Job purge, PricedOrganization org, String id) {
    server.clock.advance(later);
    try {
      purge.work().run();
      return server
              .http
              .get("/v1/organizations/" + org.id() + "/requests/" + id)
              .bearer(org.admin())
              .send()
              .status()
          == 404;
    } finally {
      server.clock.advance(later.negated());
    }
  }
}
