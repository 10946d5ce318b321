package io.engram.budgets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.engram.inference.call.PromptTokens;
import io.engram.inference.engine.ChatMessage;
import io.engram.platform.cluster.RedisConnection;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.ServerProcess;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Budgets on PostgreSQL and Redis: two nodes count one budget exactly between them; a counter that
 * Redis lost starts again from what the nodes wrote; a node that cannot reach Redis counts on its
 * own and fails nothing.
 */
class BudgetsAcrossNodesTest {
  static FakeUpstream upstream;

  @BeforeAll
  static void start() {
    upstream = new FakeUpstream();
  }

  @AfterAll
  static void stop() {
    upstream.close();
  }

  @Test
  void twoNodesPassExactlyTheBudgetBetweenThemAndALostCounterStartsFromTheDatabase()
      throws Exception {
    String redisUrl = TestDatabases.redisUrl();
    try (TestServer first =
            TestServer.builder().postgres().env("REDIS_URL", redisUrl).start();
        TestServer second =
            TestServer.builder().sharing(first).env("REDIS_URL", redisUrl).start();
        RedisConnection redis = new RedisConnection(redisUrl)) {
      PricedOrganization org = PricedOrganization.create(first, "scale", upstream);
      String budget = org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":"
          + 12 * PricedOrganization.REQUEST + "}");
      ServerProcess.sleep(1_500); // the second node follows the models and budgets within a second
      List<Future<Http.Response>> calls = new ArrayList<>();
      try (ExecutorService clients = Executors.newFixedThreadPool(30)) {
        for (int i = 0; i < 30; i++) {
          TestServer node = i % 2 == 0 ? first : second;
          calls.add(clients.submit(() -> org.chat(org.key(), "/v1/chat/completions", node.http)));
        }
      }
      List<Integer> statuses = new ArrayList<>();
      for (Future<Http.Response> call : calls) {
        Http.Response answer = call.get();
        statuses.add(answer.status());
        if (answer.status() != 200) {
          assertThat(answer.text()).contains("budget_exceeded");
        }
      }
      assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(12);
      ServerProcess.sleep(1_500); // both nodes wrote their spend
      assertThat(org.get(budget).path("spent").asDouble())
          .isCloseTo(12 * PricedOrganization.REQUEST, within(1e-12));

      // Redis forgets the counter (a restart without persistence): it starts again from the
      // database, so the spent budget stays spent.
      redis.call(jedis -> jedis.eval("for _, k in ipairs(redis.call('KEYS', 'engram:spend:{"
          + org.id() + "}:*')) do redis.call('DEL', k) end return 1"));
      assertThat(org.chat(org.key(), "/v1/chat/completions", second.http).status())
          .isEqualTo(429);
    }
  }

  /**
   * A provider that charges half as much again for every prompt as the gateway counts: the nodes
   * reserve prompts at what the model's answers charged (twice the count before their first), so
   * thirty clients on three nodes, each sending prompts of every length until refused, spend the
   * budget to within one request and never pass it by more than one request's cost.
   */
  @Test
  void aProviderThatChargesMoreThanTheGatewayCountsPassesABudgetByAtMostOneRequest()
      throws Exception {
    String redisUrl = TestDatabases.redisUrl();
    upstream.chargePromptsAt(1.5);
    try (TestServer first =
            TestServer.builder().postgres().env("REDIS_URL", redisUrl).start();
        TestServer second =
            TestServer.builder().sharing(first).env("REDIS_URL", redisUrl).start();
        TestServer third =
            TestServer.builder().sharing(first).env("REDIS_URL", redisUrl).start()) {
      PricedOrganization org = PricedOrganization.create(first, "scale", upstream);
      org.addMetered();
      // About eighteen requests: the first thirty, sent at once, reach it before any answer came.
      double limit = 2.0;
      String budget =
          org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":" + limit + "}");
      ServerProcess.sleep(1_500); // the other nodes follow the models and budgets within a second
      List<TestServer> nodes = List.of(first, second, third);
      List<Future<Integer>> clients = new ArrayList<>();
      try (ExecutorService pool = Executors.newFixedThreadPool(30)) {
        for (int i = 0; i < 30; i++) {
          Http node = nodes.get(i % 3).http;
          Random random = new Random(i);
          clients.add(pool.submit(() -> {
            // Until refused: each request a prompt of 5 to 150 words.
            for (int sent = 0; ; sent++) {
              Http.Response answer = metered(org, node, 5 + random.nextInt(146));
              if (answer.status() != 200) {
                assertThat(answer.text()).contains("budget_exceeded");
                return sent;
              }
            }
          }));
        }
      }
      int answered = 0;
      for (Future<Integer> client : clients) {
        answered += client.get();
      }
      // What is left after every client was refused: a short prompt's worth at most.
      while (metered(org, first.http, 5).status() == 200) {
        answered++;
      }
      ServerProcess.sleep(1_500); // every node wrote its spend
      double spent = org.get(budget).path("spent").asDouble();
      // The longest prompt: 150 words and their framing, charged half as much again, and the reply.
      double longest = metered(org, first.http, 150).status() == 429
          ? Math.ceil(1.5 * (PromptTokens.chat(List.of(prompt(150))))) * 1e-3 + 5e-3
          : Double.NaN;
      assertThat(answered).isGreaterThan(10);
      assertThat(spent)
          .as("spent %s of %s in %d answers", spent, limit, answered)
          .isLessThanOrEqualTo(limit + longest)
          .isGreaterThan(limit - longest);
    } finally {
      upstream.chargePromptsAt(0);
    }
  }

  private static ChatMessage prompt(int words) {
    return new ChatMessage(ChatMessage.USER, "word ".repeat(words).strip());
  }

  private static Http.Response metered(PricedOrganization org, Http node, int words) {
    return node.post("/v1/chat/completions")
        .bearer(org.key())
        .json(
            "{\"model\":\"metered\",\"max_tokens\":5,\"memory\":false,\"messages\":[{\"role\":\"user\","
                + "\"content\":\"" + prompt(words).content() + "\"}]}")
        .send();
  }

  @Test
  void withoutRedisANodeCountsOnItsOwnAndFailsNothing() {
    try (TestServer server =
        TestServer.builder().env("REDIS_URL", "redis://127.0.0.1:1").start()) {
      PricedOrganization org = PricedOrganization.create(server, "scale", upstream);
      org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":"
          + 3 * PricedOrganization.REQUEST + "}");
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        statuses.add(org.chat().status());
      }
      assertThat(statuses).containsExactly(200, 200, 200, 429, 429);
    }
  }
}
