package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Of N+k requests in one window, exactly N pass; headers and 429 bodies are right. */
class RateLimitTest {
  static TestServer server;
  static Http http;

  @BeforeAll
  static void start() {
    server = TestServer.builder()
        .env("RATE_LIMIT_REQUESTS", "7")
        .probe(routes -> routes.get("/v1/probe/read", Requires.scope(Scope.MEMORY_READ), ctx -> {
          ctx.result("ok");
        }))
        .start();
    http = server.http;
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @ParameterizedTest
  @CsvSource({"spark, 60", "seed, 200", "rise, 200", "growth, 1000", "free, 30", "founder, 30"})
  void productRoutesAreLimitedPerOrganizationByPlan(String plan, int perMinute) {
    String org = server.createOrganization(plan);
    // Two keys of one organization share the organization's budget.
    String first = server.apiKey(org, 1_000_000, "inference");
    String second = server.apiKey(org, 1_000_000, "inference");
    int passed = 0;
    Http.Response last = null;
    for (int i = 0; i < perMinute + 5; i++) {
      last = http.get("/api/auth/session").bearer(i % 2 == 0 ? first : second).send();
      if (last.status() == 200) {
        passed++;
        assertThat(last.header("X-RateLimit-Limit")).isEqualTo(String.valueOf(perMinute));
        assertThat(last.header("X-RateLimit-Remaining"))
            .isEqualTo(String.valueOf(perMinute - passed));
      }
    }
    long now = server.clock.instant().getEpochSecond();
    long secondsLeft = 60 - now % 60;
    // The whole budget is spent in this minute: the retry comes once enough of it has slid out
    // of the last 60 seconds, one request's share (60 s / limit) into the next minute.
    long retryAfter = secondsLeft + (long) Math.ceil(60.0 / perMinute);
    assertThat(passed).isEqualTo(perMinute);
    assertThat(last.status()).isEqualTo(429);
    assertThat(last.header("Retry-After")).isEqualTo(String.valueOf(retryAfter));
    assertThat(last.header("X-RateLimit-Remaining")).isEqualTo("0");
    assertThat(last.header("X-RateLimit-Reset")).isEqualTo(String.valueOf(now + secondsLeft));
    assertThat(last.json().get("success").asBoolean()).isFalse();
    assertThat(last.json().get("error").asText()).isEqualTo("Too many requests");
    assertThat(last.json().get("retryAfter").asLong()).isEqualTo(retryAfter);
    // Another organization is not affected.
    String other = server.apiKey(server.createOrganization(plan), 1000, "inference");
    assertThat(http.get("/api/auth/session").bearer(other).send().status()).isEqualTo(200);
  }

  @Test
  void v1RoutesAreLimitedPerKeyByItsRateLimit() {
    String org = server.createOrganization("scale");
    String key = server.apiKey(org, 5, "admin");
    String sibling = server.apiKey(org, 5, "admin");
    int passed = 0;
    Http.Response last = null;
    for (int i = 0; i < 8; i++) {
      last = http.get("/v1/organizations/" + org).bearer(key).send();
      passed += last.status() == 200 ? 1 : 0;
    }
    assertThat(passed).isEqualTo(5);
    assertThat(last.status()).isEqualTo(429);
    assertThat(last.json().at("/error/type").asText()).isEqualTo("rate_limit_error");
    long retryAfter = last.json().at("/error/retry_after").asLong();
    assertThat(retryAfter).isEqualTo(60 - server.clock.instant().getEpochSecond() % 60 + 12);
    assertThat(http.get("/v1/organizations/" + org).bearer(sibling).send().status())
        .as("per key")
        .isEqualTo(200);

    // One second early is still too early; at retry_after one request fits again.
    server.clock.advance(Duration.ofSeconds(retryAfter - 1));
    assertThat(http.get("/v1/organizations/" + org).bearer(key).send().status()).isEqualTo(429);
    server.clock.advance(Duration.ofSeconds(1));
    assertThat(http.get("/v1/organizations/" + org).bearer(key).send().status()).isEqualTo(200);
    // Two minutes on, the key starts afresh.
    server.clock.advance(Duration.ofMinutes(2));
    Http.Response fresh = http.get("/v1/organizations/" + org).bearer(key).send();
    assertThat(fresh.header("X-RateLimit-Remaining")).isEqualTo("4");
  }

  @Test
  void contextTokensUseTheConfiguredDefaultAndTheOperatorIsNotLimited() {
    String org = server.createOrganization("seed");
    String token = server.token(org, null, "memory:read");
    int passed = 0;
    for (int i = 0; i < 10; i++) {
      passed += http.get("/v1/probe/read").bearer(token).send().status() == 200 ? 1 : 0;
    }
    assertThat(passed).as("RATE_LIMIT_REQUESTS=7").isEqualTo(7);
    for (int i = 0; i < 10; i++) {
      // Refused for lacking the permission (403) before any limit is counted.
      assertThat(http.get("/v1/organizations/" + org).bearer(token).send().status())
          .isEqualTo(403);
    }
    for (int i = 0; i < 20; i++) {
      assertThat(server.asOperator(http.get("/v1/organizations/" + org)).status())
          .isEqualTo(200);
    }
  }

  @Test
  void aRequestCountsForSixtySecondsWhicheverMinuteItFellIn() {
    String org = server.createOrganization("scale");
    String key = server.apiKey(org, 1, "admin");
    server.clock.advance(Duration.ofSeconds(60 - server.clock.instant().getEpochSecond() % 60));
    http.get("/v1/organizations/" + org).bearer(key).send();
    server.clock.advance(Duration.ofSeconds(45));
    Http.Response limited = http.get("/v1/organizations/" + org).bearer(key).send();
    assertThat(limited.status()).isEqualTo(429);
    // A fixed window would let the next request in 15 s later, at the minute's turn; the sliding
    // window counts the first until it has wholly slid out: the end of the next minute.
    assertThat(limited.header("Retry-After")).isEqualTo("75");
    server.clock.advance(Duration.ofSeconds(15));
    assertThat(http.get("/v1/organizations/" + org).bearer(key).send().status()).isEqualTo(429);
  }

  @Test
  void aContractSpecificBudgetReplacesThePlansFromGrowthUp() {
    Http.Response created = server.asOperator(http.post("/v1/organizations")
        .json("{\"name\":\"Contract\",\"plan\":\"dedicated\",\"requests_per_minute\":5}"));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    assertThat(created.json().at("/limits/requests_per_minute").asInt()).isEqualTo(5);
    String key = server.apiKey(created.json().get("id").asText(), 1_000_000, "inference");
    int passed = 0;
    for (int i = 0; i < 8; i++) {
      passed += http.get("/api/auth/session").bearer(key).send().status() == 200 ? 1 : 0;
    }
    assertThat(passed).isEqualTo(5);

    Http.Response belowGrowth = server.asOperator(http.post("/v1/organizations")
        .json("{\"name\":\"Small\",\"plan\":\"seed\",\"requests_per_minute\":5000}"));
    assertThat(belowGrowth.status()).isEqualTo(400);
    assertThat(belowGrowth.json().at("/error/param").asText()).isEqualTo("requests_per_minute");
  }
}
