package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Two nodes sharing PostgreSQL: a configuration change on one is in force on the other in seconds. */
class PostgresConfigAcrossNodesTest {

  private static JsonNode config(TestServer node, String org) {
    return node.asOperator(node.http.get("/v1/organizations/" + org + "/config"))
        .json();
  }

  private static Http.Response patch(TestServer node, String org, String json) {
    return node.asOperator(
        node.http.patch("/v1/organizations/" + org + "/config").json(json));
  }

  @Test
  void aChangeOnOneNodeIsInForceOnTheOtherWithinSeconds() throws Exception {
    try (TestServer first = TestServer.builder().postgres().start();
        TestServer second = TestServer.builder().sharing(first).start()) {
      String org = first.createOrganization("seed");
      assertThat(config(second, org).at("/quotas/max_tokens_per_request").asInt())
          .isEqualTo(4096); // now cached on the second node
      assertThat(
              patch(first, org, "{\"quotas\":{\"max_tokens_per_request\":100}}").status())
          .isEqualTo(200);
      long start = System.nanoTime();
      while (config(second, org).at("/quotas/max_tokens_per_request").asInt() != 100) {
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("seen on the second node")
            .isLessThan(Duration.ofSeconds(5));
        Thread.sleep(50);
      }

      // Variables travel the same way: a token on the second node meets the first node's limit.
      String token = first.token(org, null, "memory:read");
      assertThat(
              second.http.get("/v1/memory/events").bearer(token).send().header("X-RateLimit-Limit"))
          .isEqualTo("100");
      assertThat(first
              .asOperator(first
                  .http
                  .post("/v1/organizations/" + org + "/env")
                  .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"7\"}}"))
              .status())
          .isEqualTo(200);
      start = System.nanoTime();
      while (!"7"
          .equals(second
              .http
              .get("/v1/memory/events")
              .bearer(token)
              .send()
              .header("X-RateLimit-Limit"))) {
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("the variable in force on the second node")
            .isLessThan(Duration.ofSeconds(5));
        Thread.sleep(50);
      }

      // Concurrent PATCHes of different fields on both nodes: every one lands, none is lost.
      List<CompletableFuture<Http.Response>> patches = new ArrayList<>();
      for (int i = 1; i <= 8; i++) {
        int n = i;
        patches.add(CompletableFuture.supplyAsync(
            () -> patch(first, org, "{\"quotas\":{\"max_concurrent_requests\":" + n + "}}")));
        patches.add(CompletableFuture.supplyAsync(
            () -> patch(second, org, "{\"network\":{\"keepalive_timeout\":" + (10 + n) + "}}")));
      }
      patches.forEach(p -> assertThat(p.join().status()).isEqualTo(200));
      // Every change counted once; the first node sees the second's within seconds.
      start = System.nanoTime();
      JsonNode last = config(first, org);
      while (last.at("/version").asInt() != 18) {
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .as("18 changes seen on the first node, now " + last.at("/version"))
            .isLessThan(Duration.ofSeconds(5));
        Thread.sleep(50);
        last = config(first, org);
      }
      assertThat(last.at("/fields/quotas.max_concurrent_requests/source").asText())
          .isEqualTo("organization");
      assertThat(last.at("/fields/network.keepalive_timeout/source").asText())
          .isEqualTo("organization");
      assertThat(last.at("/quotas/max_tokens_per_request").asInt()).isEqualTo(100);
    }
  }
}
