package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.NodeSuite;
import io.engram.support.PricedOrganization;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Refusals whose wait is longer than a client should block (a budget that renews next month, the
 * hour's spent tokens) keep their true Retry-After and say {@code x-should-retry: false}; short
 * ones (a rate window, a concurrency slot) leave the client's own retry alone. The official SDKs,
 * with their default retries, return such a refusal at once ({@code compat/long-waits.test.mjs}).
 */
class LongWaitsTest {
  /** Words that make a prompt the Free plan's 5,000 tokens of the hour cannot hold. */
  private static final int HOUR_PROMPT_WORDS = 5_100;

  @Test
  void refusalsThatWaitLongerThanAClientShouldBlockAreNotRetriedByTheSdks() throws Exception {
    try (GatewayFixture gateway = new GatewayFixture("growth", Map.of())) {
      TestServer server = gateway.server;
      PricedOrganization spent = PricedOrganization.create(server, "growth", gateway.upstream);
      spent.budget("{\"scope\":\"organization\",\"period\":\"month\",\"limit\":0.001}");
      Http.Response refused = spent.chat();
      assertThat(refused.status()).as(refused.text()).isEqualTo(429);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("budget_exceeded");
      // The test clock stands at 2030-01-01T10:00:00Z: the month renews in 30 days and 14 hours.
      assertThat(refused.header("Retry-After")).isEqualTo(String.valueOf((30 * 24 + 14) * 3600));
      assertThat(refused.header("x-should-retry")).isEqualTo("false");

      String free = server.createOrganization("free");
      String hourKey = server.apiKey(free, 1000, "inference");
      Http.Response hour = server
          .http
          .post("/v1/chat/completions")
          .bearer(hourKey)
          .json(GatewayFixture.body("word ".repeat(HOUR_PROMPT_WORDS), "\"memory\":false"))
          .send();
      assertThat(hour.status()).as(hour.text()).isEqualTo(429);
      assertThat(hour.header("Retry-After")).isEqualTo("3600");
      assertThat(hour.header("x-should-retry")).isEqualTo("false");

      // A minute's rate window is worth waiting for: the client's own retry stays in charge.
      String limited = server.apiKey(free, 2, "inference");
      server.http.get("/v1/models").bearer(limited).send();
      server.http.get("/v1/models").bearer(limited).send();
      server.clock.advance(Duration.ofSeconds(30)); // half the minute's window is left
      Http.Response window = server.http.get("/v1/models").bearer(limited).send();
      assertThat(window.status()).as(window.text()).isEqualTo(429);
      assertThat(Long.parseLong(window.header("Retry-After"))).isBetween(1L, 60L);
      assertThat(window.header("x-should-retry")).isNull();

      NodeSuite.run(
              "long-waits.test.mjs",
              Map.of(
                  "ENGRAM_ROOT",
                  "http://127.0.0.1:" + server.engram.port(),
                  "ENGRAM_BUDGET_KEY",
                  spent.key(),
                  "ENGRAM_BUDGET_MODEL",
                  "priced",
                  "ENGRAM_HOUR_KEY",
                  hourKey,
                  "ENGRAM_HOUR_MODEL",
                  GatewayFixture.MODEL,
                  "ENGRAM_HOUR_PROMPT_WORDS",
                  String.valueOf(HOUR_PROMPT_WORDS)))
          .assertPassed(4);
    }
  }
}
