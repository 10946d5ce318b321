package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Limits of capabilities that act hold across nodes: two servers on one PostgreSQL database, many
 * conversations at once, and {@code maxOrdersPerDay} 3 creates exactly three orders; the same tool
 * call sent to both nodes at once runs the bridge once.
 */
class ActionsAcrossNodesTest {

  @Test
  void theDailyLimitAndIdempotencyHoldAcrossTwoNodes() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer first = node(upstream, TestServer.builder().postgres());
        TestServer second = node(upstream, TestServer.builder().sharing(first))) {
      String org = first.createOrganization("growth");
      String admin = first.apiKey(org, 1000, "admin");
      String key = first.apiKey(org, 100_000, "inference");
      ActionFixtures actions = new ActionFixtures(first, org, admin);
      ActionFixtures.Bridge orders = actions.bridge("create_orders");
      try {
        String assistant = actions.assistant(ActionFixtures.ordersConfig(3, false));
        String order = "[call:create_orders {\"order_type\":\"purchase\",\"items\":[{\"sku\":"
            + "\"A1\",\"quantity\":1}]}]";
        List<Http.Response> replies =
            concurrently(12, i -> chat(i % 2 == 0 ? first : second, key, assistant, order));
        replies.forEach(reply -> assertThat(reply.status()).as(reply.text()).isEqualTo(200));
        assertThat(orders.count()).isEqualTo(3);
        assertThat(statuses(first, org, admin, assistant))
            .containsOnly("executed", "refused")
            .filteredOn("executed"::equals)
            .hasSize(3);

        String retried = actions.assistant(ActionFixtures.ordersConfig(100, false));
        String once = "[call#call_same_on_both:create_orders {\"order_type\":\"purchase\","
            + "\"items\":[{\"sku\":\"B2\",\"quantity\":1}]}]";
        concurrently(6, i -> chat(i % 2 == 0 ? first : second, key, retried, once));
        assertThat(orders.count()).isEqualTo(4);
        assertThat(statuses(first, org, admin, retried)).hasSize(1);
      } finally {
        orders.server.stop(0);
      }
    }
  }

  private static TestServer node(FakeUpstream upstream, TestServer.Builder builder) {
    return builder
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", GatewayFixture.UPSTREAM_MODEL)
        .env("DEFAULT_MODEL", GatewayFixture.MODEL)
        .start();
  }

  private static Http.Response chat(TestServer node, String key, String assistant, String text) {
    return node.http
        .post("/v1/assistants/" + assistant + "/chat/completions")
        .bearer(key)
        .json(GatewayFixture.body(text, "\"memory\":false"))
        .send();
  }

  private interface Call {
    Http.Response make(int i);
  }

  private static List<Http.Response> concurrently(int n, Call call) throws Exception {
    ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
    try {
      List<Future<Http.Response>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        futures.add(pool.submit(() -> call.make(index)));
      }
      List<Http.Response> replies = new ArrayList<>();
      for (Future<Http.Response> future : futures) {
        replies.add(future.get());
      }
      return replies;
    } finally {
      pool.shutdown();
    }
  }

  private static List<String> statuses(
      TestServer node, String org, String admin, String assistant) {
    Http.Response listed = node.http
        .get("/v1/organizations/" + org + "/capability-executions?assistant_id=" + assistant)
        .bearer(admin)
        .send();
    List<String> statuses = new ArrayList<>();
    for (JsonNode execution : listed.json().get("data")) {
      statuses.add(execution.get("status").asText());
    }
    return statuses;
  }
}
