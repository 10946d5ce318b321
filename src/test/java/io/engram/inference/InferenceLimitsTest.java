package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The plan's limits: concurrency, tokens per hour from real usage, requests per minute per key; and usage. */
class InferenceLimitsTest {

  @Test
  void concurrentRequestsBeyondTheLimitGet429AndASlotFreesWhenOneFinishes() throws Exception {
    try (GatewayFixture gateway =
        new GatewayFixture("seed", Map.of("MAX_CONCURRENT_REQUESTS", "2"))) {
      gateway.upstream.script(FakeUpstream.Script.NORMAL.interval(300));
      List<CompletableFuture<Http.Response>> running = List.of(
          CompletableFuture.supplyAsync(() -> gateway
              .chat(gateway.token, GatewayFixture.body("a", "\"stream\":true"))
              .send()),
          CompletableFuture.supplyAsync(
              () -> gateway.chat(gateway.token, GatewayFixture.body("b", "")).send()));
      StreamingTest.awaitUntil(() -> gateway.upstream.inFlight() == 2);
      Http.Response third =
          gateway.chat(gateway.key, GatewayFixture.body("c", "")).send();
      assertThat(third.status()).isEqualTo(429);
      assertThat(third.json().get("error").get("type").asText()).isEqualTo("rate_limit_error");
      assertThat(third.json().get("error").get("code").asText())
          .isEqualTo("concurrency_limit_exceeded");
      assertThat(third.json().get("error").get("retry_after").asInt()).isEqualTo(1);
      assertThat(third.header("Retry-After")).isEqualTo("1");
      running.forEach(f -> assertThat(f.join().status()).isEqualTo(200));
      gateway.upstream.script(FakeUpstream.Script.NORMAL);
      assertThat(gateway.chat(gateway.key, GatewayFixture.body("d", "")).send().status())
          .isEqualTo(200);
    }
  }

  /**
   * The slot is taken at the door, before the body is read: a request the route then refuses (a
   * bad body, an unknown model, a failed embedding input) gives it back, or the organization's
   * only slot would be lost to its first mistake.
   */
  @Test
  void aSlotTakenAtTheDoorIsGivenBackWhenTheRouteRefusesTheRequest() {
    try (GatewayFixture gateway =
        new GatewayFixture("seed", Map.of("MAX_CONCURRENT_REQUESTS", "1"))) {
      assertThat(gateway.chat(gateway.key, "{\"model\":\"engram-chat\"}").send().status())
          .isEqualTo(400);
      assertThat(gateway
              .chat(gateway.key, "{\"model\":\"no-such-model\",\"messages\":[]}")
              .send()
              .status())
          .isIn(400, 404);
      assertThat(gateway
              .server
              .http
              .post("/v1/embeddings")
              .bearer(gateway.key)
              .json("{\"model\":\"all-minilm-l6-v2\",\"input\":[]}")
              .send()
              .status())
          .isEqualTo(400);
      for (int i = 0; i < 3; i++) {
        Http.Response chat =
            gateway.chat(gateway.key, GatewayFixture.body("ok " + i, "")).send();
        assertThat(chat.status()).as(chat.text()).isEqualTo(200);
      }
    }
  }

  /**
   * A chat the upstream failed before any output (streamed or not) costs nothing: the hour's
   * tokens are all still there, and the usage report counts the requests as errors with no token.
   */
  @Test
  void aChatThatFailedBeforeAnyOutputCostsNoTokenOfTheHour() {
    try (GatewayFixture gateway = new GatewayFixture("free", Map.of())) {
      gateway.upstream.script(FakeUpstream.Script.error(
          503, "{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}", null));
      Http.Response plain = gateway
          .chat(gateway.token, GatewayFixture.body("Hello there", "\"memory\":false"))
          .send();
      assertThat(plain.status()).as(plain.text()).isIn(502, 503);
      Http.Response streamed = gateway
          .chat(gateway.token, GatewayFixture.body("Hello again", "\"stream\":true"))
          .send();
      assertThat(streamed.status()).isIn(200, 502, 503);

      gateway.server.engram.inference().flushUsage();
      JsonNode usage = gateway
          .server
          .asOperator(gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/usage"))
          .json();
      assertThat(usage.at("/current_hour/tokens_used").asLong()).isZero();
      assertThat(usage.at("/current_hour/tokens_remaining").asLong()).isEqualTo(5_000);
      assertThat(usage.at("/totals/total_tokens").asLong()).isZero();
      assertThat(usage.at("/totals/errors").asLong()).isEqualTo(2);

      gateway.upstream.script(FakeUpstream.Script.NORMAL);
      Http.Response after = gateway
          .chat(gateway.token, GatewayFixture.body("Hello there", "\"memory\":false"))
          .send();
      // The reservation of this one (its prompt and the plan's longest reply) is all that is
      // taken from the hour: the failed ones left nothing behind.
      assertThat(Integer.parseInt(after.header("x-ratelimit-remaining-tokens")))
          .isBetween(5_000 - 1_024 - 20, 5_000 - 1_024);
    }
  }

  @Test
  void theHourlyTokenBudgetReservesBeforeAndSettlesAfterAndRenewsWithTheHour() {
    try (GatewayFixture gateway = new GatewayFixture("free", Map.of())) {
      Http.Response small = gateway
          .chat(gateway.token, GatewayFixture.body("Hello there", "\"memory\":false"))
          .send();
      assertThat(small.status()).isEqualTo(200);
      assertThat(small.header("x-ratelimit-limit-tokens")).isEqualTo("5000");
      // The header tells what is left once this request's reservation (prompt and the plan's
      // longest reply, 1,024 on Free) is counted; its unused part comes back when it ends.
      int remainingAfterSmall = Integer.parseInt(small.header("x-ratelimit-remaining-tokens"));
      assertThat(remainingAfterSmall).isBetween(5_000 - 1_024 - 20, 5_000 - 1_024);

      // A request whose prompt cannot fit in what is left is refused before any work.
      String big = "word ".repeat(4_990);
      Http.Response tooBig = gateway
          .chat(gateway.token, GatewayFixture.body(big, "\"memory\":false"))
          .send();
      assertThat(tooBig.status()).as(tooBig.text()).isEqualTo(429);
      assertThat(tooBig.json().at("/error/code").asText()).isEqualTo("tokens_per_hour_exceeded");
      assertThat(tooBig.json().at("/error/message").asText()).contains("needs at least");
      assertThat(gateway.upstream.lastRequest().toString()).doesNotContain("word word");

      // One that fits with its least reply but not with the plan's longest gets the rest: its
      // max_tokens is what the hour has left, so the hour cannot be overrun.
      String large = "word ".repeat(4_500);
      Http.Response fitted = gateway
          .chat(gateway.token, GatewayFixture.body(large, "\"memory\":false"))
          .send();
      assertThat(fitted.status()).as(fitted.text()).isEqualTo(200);
      int sentMaxTokens = gateway.upstream.lastRequest().get("max_tokens").asInt();
      assertThat(sentMaxTokens).isLessThan(1_024).isPositive();
      assertThat(fitted.header("x-ratelimit-remaining-tokens")).isEqualTo("0");
      int used = small.json().get("usage").get("total_tokens").asInt()
          + fitted.json().get("usage").get("total_tokens").asInt();
      assertThat(used).isLessThanOrEqualTo(5_000);

      // A max_tokens that cannot fit is refused, not shortened: the caller asked for it.
      gateway.server.engram.inference().flushUsage();
      Http.Response explicit = gateway
          .chat(gateway.token, GatewayFixture.body("One more", "\"max_tokens\":1000"))
          .send();
      assertThat(explicit.status()).as(explicit.text()).isEqualTo(429);
      JsonNode error = explicit.json().get("error");
      assertThat(error.get("code").asText()).isEqualTo("tokens_per_hour_exceeded");
      assertThat(error.get("retry_after").asLong())
          .isEqualTo(3_600); // the test clock stands at 10:00:00
      assertThat(gateway.upstream.lastRequest().toString()).doesNotContain("One more");

      gateway.server.engram.inference().flushUsage();
      Http.Response usage = gateway.server.asOperator(
          gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/usage"));
      assertThat(usage.status()).as(usage.text()).isEqualTo(200);
      assertThat(usage.json().get("totals").get("total_tokens").asInt()).isEqualTo(used);
      assertThat(usage.json().get("totals").get("requests").asInt()).isEqualTo(2);
      assertThat(usage.json().get("current_hour").get("tokens_remaining").asInt())
          .isEqualTo(5_000 - used);
      JsonNode row = usage.json().get("data").get(0);
      assertThat(row.get("model").asText()).isEqualTo(GatewayFixture.MODEL);
      assertThat(row.get("hour_start").asLong())
          .isEqualTo(gateway.server.clock.instant().getEpochSecond());

      gateway.server.clock.advance(Duration.ofHours(1));
      assertThat(gateway
              .chat(gateway.token, GatewayFixture.body("New hour", ""))
              .send()
              .status())
          .isEqualTo(200);
    }
  }

  @Test
  void usageCountsFailuresAndReportsLatencyPercentilesByModelAndDay() {
    try (GatewayFixture gateway = GatewayFixture.start()) {
      gateway.upstream.script(FakeUpstream.Script.NORMAL.headerDelay(120));
      for (int i = 0; i < 3; i++) {
        assertThat(gateway
                .chat(gateway.token, GatewayFixture.body("ok " + i, ""))
                .send()
                .status())
            .isEqualTo(200);
      }
      gateway.upstream.script(FakeUpstream.Script.error(500, "{\"error\":\"boom\"}", null));
      assertThat(gateway
              .chat(gateway.token, GatewayFixture.body("fails", ""))
              .send()
              .status())
          .isGreaterThanOrEqualTo(500);
      gateway.upstream.script(FakeUpstream.Script.NORMAL);

      Http.Response usage = gateway.server.asOperator(
          gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/usage"));
      assertThat(usage.status()).as(usage.text()).isEqualTo(200);
      JsonNode body = usage.json();
      assertThat(body.at("/totals/requests").asInt()).isEqualTo(4);
      assertThat(body.at("/totals/errors").asInt()).isEqualTo(1);
      assertThat(body.at("/data/0/errors").asInt()).isEqualTo(1);
      JsonNode latency = body.get("latency");
      assertThat(latency.get("requests").asInt()).isEqualTo(4);
      // Three of four waited 120 ms for the upstream's headers: the median's bucket holds 120 ms.
      assertThat(latency.get("p50_ms").asLong()).isBetween(120L, 160L);
      assertThat(latency.get("p99_ms").asLong())
          .isGreaterThanOrEqualTo(latency.get("p50_ms").asLong());
      assertThat(latency.at("/by_model/0/model").asText()).isEqualTo(GatewayFixture.MODEL);
      assertThat(latency.at("/by_model/0/requests").asInt()).isEqualTo(4);
      assertThat(latency.at("/by_day/0/day_start").asLong() % 86_400).isZero();
      // The headroom of each key and token: the token made the four requests this minute.
      JsonNode windows = body.get("rate_limits");
      JsonNode token = null;
      for (JsonNode window : windows) {
        if (window.get("used_this_minute").asInt() >= 4) {
          token = window;
        }
      }
      assertThat(token).as(windows.toString()).isNotNull();
      assertThat(token.get("kind").asText()).isEqualTo("context_token");
      assertThat(token.get("remaining").asLong())
          .isEqualTo(token.get("requests_per_minute").asLong()
              - token.get("used_this_minute").asLong());
    }
  }

  @Test
  void usageIsWrittenToTheDatabaseInHourlyRows() {
    try (GatewayFixture gateway = new GatewayFixture("free", Map.of())) {
      Http.Response large = gateway
          .chat(gateway.token, GatewayFixture.body("word ".repeat(2_000), "\"memory\":false"))
          .send();
      assertThat(large.status()).isEqualTo(200);
      gateway.server.engram.inference().flushUsage();
      // Straight from the table: an empty ledger plus a written row is the same answer as a pending
      // one.
      long rows = gateway
          .server
          .engram
          .services()
          .database()
          .read(handle -> handle
              .createQuery("SELECT COUNT(*) FROM inference_usage WHERE org_id = :org")
              .bind("org", gateway.orgId)
              .mapTo(Long.class)
              .one());
      assertThat(rows).isEqualTo(1);
    }
  }

  @Test
  void eachKeyHasItsRequestsPerMinuteWithBothHeaderFamilies() {
    try (GatewayFixture gateway = GatewayFixture.start()) {
      String key = gateway.server.apiKey(gateway.orgId, 2, "inference");
      Http.Response first = gateway.chat(key, GatewayFixture.body("1", "")).send();
      assertThat(first.header("X-RateLimit-Limit")).isEqualTo("2");
      assertThat(first.header("X-RateLimit-Remaining")).isEqualTo("1");
      assertThat(first.header("x-ratelimit-limit-requests")).isEqualTo("2");
      assertThat(first.header("x-ratelimit-remaining-requests")).isEqualTo("1");
      assertThat(first.header("x-ratelimit-reset-requests")).endsWith("s");
      assertThat(gateway.chat(key, GatewayFixture.body("2", "")).send().status())
          .isEqualTo(200);
      Http.Response third = gateway.chat(key, GatewayFixture.body("3", "")).send();
      assertThat(third.status()).isEqualTo(429);
      assertThat(third.json().get("error").get("retry_after").asLong()).isPositive();
      // Another key of the same organization has its own budget.
      assertThat(gateway.chat(gateway.key, GatewayFixture.body("4", "")).send().status())
          .isEqualTo(200);
    }
  }

  @Test
  void theUsageRouteIsForTheOperatorAndTheOrganizationsAdminKeys() {
    try (GatewayFixture gateway = GatewayFixture.start()) {
      String path = "/v1/organizations/" + gateway.orgId + "/usage";
      String admin = gateway.server.apiKey(gateway.orgId, 100, "admin");
      assertThat(gateway.server.http.get(path).bearer(admin).send().status()).isEqualTo(200);
      assertThat(gateway.server.http.get(path).bearer(gateway.key).send().status())
          .isEqualTo(403);
      assertThat(gateway.server.http.get(path).bearer(gateway.token).send().status())
          .isEqualTo(403);
      String other = gateway.server.createOrganization("seed");
      String otherAdmin = gateway.server.apiKey(other, 100, "admin");
      assertThat(gateway.server.http.get(path).bearer(otherAdmin).send().status())
          .isEqualTo(404);
      assertThat(gateway
              .server
              .asOperator(gateway.server.http.get("/v1/organizations/org_nope/usage"))
              .status())
          .isEqualTo(404);
      assertThat(gateway
              .server
              .http
              .get(path + "?start=2030-01-02T00:00:00Z&end=2030-01-01T00:00:00Z")
              .bearer(admin)
              .send()
              .status())
          .isEqualTo(400);
      assertThat(gateway
              .server
              .http
              .get(path + "?start=yesterday")
              .bearer(admin)
              .send()
              .status())
          .isEqualTo(400);
      assertThat(gateway
              .server
              .http
              .get(path + "?end=%2B999999999-12-31T00:00:00Z")
              .bearer(admin)
              .send()
              .status())
          .isEqualTo(400);
      assertThat(gateway
              .server
              .http
              .get(path + "?start=1900-01-01T00:00:00Z&end=1900-01-02T00:00:00Z")
              .bearer(admin)
              .send()
              .status())
          .isEqualTo(400);
    }
  }
}
