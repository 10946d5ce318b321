package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * With REDIS_URL, a key's rate limit holds for the organization, not per node: 30 clients spread
 * over two nodes on one PostgreSQL and one Redis get exactly the limit between them. Without
 * Redis answering, a node counts on its own and never fails a request for it.
 */
class RedisRateLimitAcrossNodesTest {

  @Test
  void aKeysLimitIsExactAcrossNodes() throws Exception {
    String redis = TestDatabases.redisUrl();
    try (TestServer first =
            TestServer.builder().postgres().env("REDIS_URL", redis).start();
        TestServer second =
            TestServer.builder().sharing(first).env("REDIS_URL", redis).start()) {
      String org = first.createOrganization("scale");
      String key = first.apiKey(org, 100, "inference");
      awaitRoomInTheMinute();
      List<Future<Http.Response>> calls = new ArrayList<>();
      try (ExecutorService clients = Executors.newFixedThreadPool(30)) {
        for (int i = 0; i < 150; i++) {
          TestServer node = i % 2 == 0 ? first : second;
          calls.add(clients.submit(() -> node.http.get("/v1/models").bearer(key).send()));
        }
      }
      int admitted = 0;
      int refused = 0;
      for (Future<Http.Response> call : calls) {
        Http.Response response = call.get();
        if (response.status() == 200) {
          admitted++;
        } else {
          assertThat(response.status()).as(response.text()).isEqualTo(429);
          assertThat(response.header("Retry-After")).isNotNull();
          refused++;
        }
      }
      assertThat(admitted).isEqualTo(100);
      assertThat(refused).isEqualTo(50);
      Http.Response last = second.http.get("/v1/models").bearer(key).send();
      assertThat(last.header("X-RateLimit-Limit")).isEqualTo("100");
      assertThat(last.header("X-RateLimit-Remaining")).isEqualTo("0");
      String metrics =
          first.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
      assertThat(metrics).contains("engram_redis_available 1.0");
      // Each of the node's 75 requests waited for one rate-limit script.
      assertThat(commandsWaited(first)).isGreaterThanOrEqualTo(75);
    }
  }

  @Test
  void withoutRedisANodeCountsOnItsOwnAndFailsNothing() {
    try (TestServer server =
        TestServer.builder().env("REDIS_URL", "redis://127.0.0.1:1").start()) {
      String org = server.createOrganization("seed");
      String key = server.apiKey(org, 3, "inference");
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        statuses.add(server.http.get("/v1/models").bearer(key).send().status());
      }
      assertThat(statuses).containsExactly(200, 200, 200, 429, 429);
      assertThat(server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text())
          .contains("engram_redis_available 0.0");
    }
  }

  @Test
  void concurrencySlotsHoldForTheOrganizationAcrossNodes() throws Exception {
    String redis = TestDatabases.redisUrl();
    try (io.engram.support.FakeUpstream upstream = new io.engram.support.FakeUpstream();
        TestServer first = gatewayNode(TestServer.builder().postgres(), redis, upstream);
        TestServer second = gatewayNode(TestServer.builder().sharing(first), redis, upstream)) {
      String org = first.createOrganization("scale");
      String key = first.apiKey(org, 10_000, "inference");
      Http.Response config = first.asOperator(first
          .http
          .patch("/v1/organizations/" + org + "/config")
          .json("{\"quotas\":{\"max_concurrent_requests\":2}}"));
      assertThat(config.status()).as(config.text()).isEqualTo(200);
      upstream.script(io.engram.support.FakeUpstream.Script.NORMAL.headerDelay(1_500));
      String chat =
          "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      List<Future<Http.Response>> calls = new ArrayList<>();
      try (ExecutorService clients = Executors.newFixedThreadPool(6)) {
        for (int i = 0; i < 6; i++) {
          TestServer node = i % 2 == 0 ? first : second;
          calls.add(clients.submit(() ->
              node.http.post("/v1/chat/completions").bearer(key).json(chat).send()));
        }
      }
      int admitted = 0;
      for (Future<Http.Response> call : calls) {
        Http.Response response = call.get();
        if (response.status() == 200) {
          admitted++;
        } else {
          assertThat(response.json().at("/error/code").asText())
              .isEqualTo("concurrency_limit_exceeded");
        }
      }
      assertThat(admitted).isEqualTo(2);
      // Given back when each ended: the next two pass again.
      upstream.script(io.engram.support.FakeUpstream.Script.NORMAL);
      for (TestServer node : List.of(first, second)) {
        assertThat(node.http
                .post("/v1/chat/completions")
                .bearer(key)
                .json(chat)
                .send()
                .status())
            .isEqualTo(200);
      }
    }
  }

  /**
   * At a model route's door one script counts the request in its key's window and takes the
   * organization's slot: the window is the key's on every route (chats and model listings count in
   * one), a chat the route refuses gives its slot back, and a chat on a plan without an hourly
   * budget waits for two scripts in all (the door, and giving the slot back).
   */
  @Test
  void aChatTakesItsWindowAndSlotInOneScriptSharingTheKeysWindow() throws Exception {
    String redis = TestDatabases.redisUrl();
    try (io.engram.support.FakeUpstream upstream = new io.engram.support.FakeUpstream();
        TestServer node = gatewayNode(TestServer.builder(), redis, upstream)) {
      String org = node.createOrganization("scale");
      String key = node.apiKey(org, 6, "inference");
      Http.Response config = node.asOperator(node.http
          .patch("/v1/organizations/" + org + "/config")
          .json("{\"quotas\":{\"max_concurrent_requests\":1}}"));
      assertThat(config.status()).as(config.text()).isEqualTo(200);
      String chat = "{\"model\":\"engram-chat\",\"memory\":false,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      awaitRoomInTheMinute();
      Http.Response refused = node.http
          .post("/v1/chat/completions")
          .bearer(key)
          .json("{\"model\":1}")
          .send();
      assertThat(refused.status()).as(refused.text()).isEqualTo(400);
      assertThat(refused.header("X-RateLimit-Remaining")).isEqualTo("5");
      assertThat(node.http.get("/v1/models").bearer(key).send().header("X-RateLimit-Remaining"))
          .isEqualTo("4");
      long before = commandsWaited(node);
      Http.Response answered =
          node.http.post("/v1/chat/completions").bearer(key).json(chat).send();
      assertThat(answered.status()).as(answered.text()).isEqualTo(200);
      assertThat(commandsWaited(node) - before).isEqualTo(2);
      assertThat(answered.header("X-RateLimit-Remaining")).isEqualTo("3");
      for (int i = 0; i < 3; i++) {
        assertThat(node.http.get("/v1/models").bearer(key).send().status()).isEqualTo(200);
      }
      Http.Response limited =
          node.http.post("/v1/chat/completions").bearer(key).json(chat).send();
      assertThat(limited.status()).isEqualTo(429);
      assertThat(limited.json().at("/error/code").asText()).isEqualTo("rate_limit_exceeded");
      assertThat(limited.header("X-RateLimit-Remaining")).isEqualTo("0");
    }
  }

  /** Redis commands the node has waited for, from its /metrics. */
  private static long commandsWaited(TestServer node) {
    String metrics =
        node.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
    java.util.regex.Matcher waited = java.util.regex.Pattern.compile(
            "(?m)^engram_redis_command_seconds_count (\\d+)")
        .matcher(metrics);
    return waited.find() ? Math.round(Double.parseDouble(waited.group(1))) : 0;
  }

  private static TestServer gatewayNode(
      TestServer.Builder builder, String redis, io.engram.support.FakeUpstream upstream) {
    return builder
        .env("REDIS_URL", redis)
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("DEFAULT_MODEL", "engram-chat")
        .start();
  }

  /** A fixed window must not end mid-test: start with 20 seconds or more left in the minute. */
  private static void awaitRoomInTheMinute() throws InterruptedException {
    long intoMinute = System.currentTimeMillis() % 60_000;
    if (intoMinute > 40_000) {
      Thread.sleep(60_000 - intoMinute + 100);
    }
  }
}
