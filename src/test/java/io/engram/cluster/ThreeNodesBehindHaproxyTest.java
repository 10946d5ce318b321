package io.engram.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.BesideTheRest;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import io.engram.support.WebSocketClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Three Engram processes on one PostgreSQL and one Redis, behind HAProxy: the organization's
 * limits hold for the organization, not per node, a revocation reaches every node at once, memory
 * written on one node is found on the others, reflection runs on one node at a time, and losing
 * Redis or a node costs neither a 500 nor a slot forever. The tests run in order on one cluster;
 * the last ones stop Redis and kill a node.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@BesideTheRest
class ThreeNodesBehindHaproxyTest {
  private static final String ORG_ROUTE = "/v1/organizations/{org_id}";
  private static final HttpClient STREAMS =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private EngramCluster cluster;
  private final ExecutorService clients = Executors.newFixedThreadPool(30);

  @BeforeAll
  void start() throws IOException {
    cluster = new EngramCluster(nodeEnvironment());
    cluster.awaitBalanced();
  }

  /** What every node gets besides the cluster's own variables (none: the embedded index). */
  Map<String, String> nodeEnvironment() {
    return Map.of();
  }

  @AfterAll
  void stop() {
    clients.shutdownNow();
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void thirtyClientsAgainstAKeyLimitedTo100PerMinuteGetExactly100AcrossTheNodes() throws Exception {
    String org = cluster.operator().createOrganization("seed");
    String key = cluster.operator().createApiKey(org, 100, "admin").get("token").asText();
    awaitRoomInTheMinute();
    List<Integer> statuses = inParallel(
        150,
        i -> cluster
            .balanced()
            .get("/v1/organizations/" + org)
            .bearer(key)
            .send()
            .status());
    assertThat(Collections.frequency(statuses, 200)).isEqualTo(100);
    assertThat(Collections.frequency(statuses, 429)).isEqualTo(50);
    // The balancer spread them: every node answered some.
    for (ServerProcess node : cluster.nodes) {
      assertThat(EngramCluster.served(node, ORG_ROUTE)).isPositive();
    }
  }

  @Test
  @Order(2)
  void concurrencySlotsAreCountedForTheOrganizationAcrossTheNodes() throws Exception {
    String key = keyOfAnOrganizationRunningAtMost(4);
    cluster.upstream.script(FakeUpstream.Script.NORMAL.interval(600)); // 3 s per answer
    try {
      List<JsonNode> answers = inParallel(30, i -> chat(key, "hello " + i, false));
      assertThat(answers.stream().filter(a -> a.has("choices")).count()).isEqualTo(4);
      assertThat(answers.stream()
              .filter(a -> a.at("/error/code").asText().equals("concurrency_limit_exceeded"))
              .count())
          .isEqualTo(26);
    } finally {
      cluster.upstream.script(FakeUpstream.Script.NORMAL);
    }
    // Every slot came back: four more run.
    List<JsonNode> again = inParallel(4, i -> chat(key, "again " + i, false));
    assertThat(again).allSatisfy(answer -> assertThat(answer.has("choices")).isTrue());
  }

  @Test
  @Order(3)
  void theHourlyTokenBudgetHoldsForTheOrganizationAcrossTheNodes() throws Exception {
    String org = cluster.operator().createOrganization("spark"); // 10,000 tokens per hour
    String key = cluster
        .operator()
        .createApiKey(org, 10_000, "admin", "inference")
        .get("token")
        .asText();
    String prompt = "tell me about the weather ".repeat(40);
    AtomicInteger answered = new AtomicInteger();
    List<Integer> perClient = inParallel(30, client -> {
      int mine = 0;
      while (true) {
        JsonNode answer = chat(key, prompt + client, true);
        if (answer.at("/error/code").asText().equals("concurrency_limit_exceeded")) {
          continue; // Spark runs 5 at once: this client waits its turn
        }
        if (!answer.has("choices")) {
          assertThat(answer.at("/error/code").asText()).isEqualTo("tokens_per_hour_exceeded");
          return mine;
        }
        mine++;
        answered.incrementAndGet();
      }
    });
    assertThat(perClient).hasSize(30);
    // The requests that were in flight when the last client was refused gave back what they did
    // not use; one client fills what that left, until it too is refused.
    JsonNode last;
    while ((last = chat(key, prompt, true)).has("choices")) {
      answered.incrementAndGet();
    }
    assertThat(last.at("/error/code").asText()).isEqualTo("tokens_per_hour_exceeded");
    // Every node writes its usage within a second (and reads the others' every two).
    EngramCluster.sleep(2_500);
    JsonNode hour = cluster
        .operator()
        .send(cluster.nodes.get(1).http().get("/v1/organizations/" + org + "/usage"))
        .json()
        .get("current_hour");
    assertThat(hour.get("tokens_used").asLong())
        .as("the hour's tokens, every node's")
        .isLessThanOrEqualTo(10_000);
    // Filled, not merely held: what is left cannot hold one more request (about 200 prompt
    // tokens, framing and max_tokens 64).
    assertThat(hour.get("tokens_remaining").asLong()).isLessThan(300);
    assertThat(answered.get()).isGreaterThan(10);
  }

  @Test
  @Order(4)
  void thirtyClientsOnEveryRouteThatSpendsPassExactlyTheBudgetOfTheOrganizationAndOfAKey()
      throws Exception {
    PricedOrganization org = PricedOrganization.create(
        cluster.operator(), cluster.balanced(), "scale", cluster.upstream);
    String budget = org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":"
        + 20 * PricedOrganization.REQUEST + "}");
    // Every node follows models and budgets changed every second (plus the read's own time).
    EngramCluster.sleep(2_500);
    assertThat(spendUntilRefused(org, org.key())).isEqualTo(20);
    // Every node writes its spend every second: the budget reads all twenty within a few.
    assertThat(spentOnceWritten(org, budget, 20 * PricedOrganization.REQUEST))
        .isCloseTo(20 * PricedOrganization.REQUEST, within(1e-12));

    PricedOrganization other = PricedOrganization.create(
        cluster.operator(), cluster.balanced(), "scale", cluster.upstream);
    JsonNode key = cluster.operator().createApiKey(other.id(), 100_000, "inference");
    other.budget("{\"scope\":\"key\",\"scope_id\":\"" + key.path("id").asText()
        + "\",\"period\":\"month\",\"limit\":" + 10 * PricedOrganization.REQUEST + "}");
    EngramCluster.sleep(2_500);
    assertThat(spendUntilRefused(other, key.path("token").asText())).isEqualTo(10);
    // The organization's other key is not held to that key's budget.
    assertThat(other.chat().status()).isEqualTo(200);

    // Embeddings are reserved at what the provider bills, which is not what the gateway counts
    // (the fake bills seven tokens an input, the gateway counts "hi" as one): each node learns it
    // from its first answer (the organization's other key asks each node once), then thirty
    // clients on a key of twenty inputs' worth pass exactly twenty.
    JsonNode embedding = cluster.operator().createApiKey(other.id(), 100_000, "inference");
    other.budget("{\"scope\":\"key\",\"scope_id\":\"" + embedding.path("id").asText()
        + "\",\"period\":\"day\",\"limit\":" + 20 * PricedOrganization.EMBEDDING + "}");
    String input = "{\"model\":\"embedder\",\"input\":\"hi\"}";
    for (ServerProcess node : cluster.nodes) {
      Http.Response first =
          node.http().post("/v1/embeddings").bearer(other.key()).json(input).send();
      assertThat(first.status()).as(first.text()).isEqualTo(200);
    }
    // The new key's budget reaches every node as the ones above did (followed every second).
    EngramCluster.sleep(2_500);
    String token = embedding.path("token").asText();
    assertThat(inParallel(30, client -> spendOverHttp("/v1/embeddings", input, token)).stream()
            .mapToInt(Integer::intValue)
            .sum())
        .isEqualTo(20);
  }

  /**
   * The budget's spend as read through the balancer, once it reads {@code expected} or after ten
   * seconds: what the nodes wrote, which must never pass what the budget let through.
   */
  private static double spentOnceWritten(PricedOrganization org, String budget, double expected) {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    double spent;
    while ((spent = org.get(budget).path("spent").asDouble()) < expected - 1e-12
        && System.nanoTime() < deadline) {
      EngramCluster.sleep(250);
    }
    return spent;
  }

  /**
   * Thirty clients through the balancer, each on one of the routes that spend (chat, completions,
   * Responses, messages, a conversation as an assistant, chat over a WebSocket), until each is
   * refused by a budget: how many requests passed in all.
   */
  private int spendUntilRefused(PricedOrganization org, String key) {
    String chat =
        "{\"model\":\"priced\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    Http.Response assistant = cluster
        .balanced()
        .post("/api/assistants")
        .bearer(org.admin())
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send();
    assertThat(assistant.status()).as(assistant.text()).isEqualTo(201);
    String[][] routes = {
      {"/v1/chat/completions", chat},
      {"/v1/completions", "{\"model\":\"priced\",\"prompt\":\"hi\",\"max_tokens\":5}"},
      {"/v1/responses", "{\"model\":\"priced\",\"input\":\"hi\",\"max_output_tokens\":5}"},
      {"/v1/messages", chat},
      {
        "/v1/assistants/" + assistant.json().at("/assistant/_id").asText() + "/chat/completions",
        chat
      },
      {"/ws", null},
    };
    List<Integer> perClient = inParallel(30, client -> {
      String[] route = routes[client % routes.length];
      return route[1] == null ? spendOverWebSocket(key) : spendOverHttp(route[0], route[1], key);
    });
    return perClient.stream().mapToInt(Integer::intValue).sum();
  }

  private int spendOverHttp(String path, String body, String key) {
    int passed = 0;
    while (true) {
      Http.Response answer =
          cluster.balanced().post(path).bearer(key).json(body).send();
      if (answer.status() == 200) {
        passed++;
        continue;
      }
      assertThat(answer.status()).as(path + " " + answer.text()).isEqualTo(429);
      // Anthropic's error shape has no code: its message says which limit refused.
      if (!answer.text().contains("requests in flight")) {
        assertThat(answer.text()).as(path).contains("budget bud_");
        return passed;
      }
    }
  }

  /** Chats over one WebSocket through the balancer until a budget refuses one (an error frame). */
  private int spendOverWebSocket(String key) {
    String inference = """
        {"type":"inference","model":"priced","max_tokens":5,"stream":false,"memory":false,
         "messages":[{"role":"user","content":"hi"}]}""";
    try (WebSocketClient socket = new WebSocketClient(cluster.balancedPort(), "/ws", null)) {
      socket.send("{\"type\":\"auth\",\"api_key\":\"" + key + "\"}");
      assertThat(socket.next().path("type").asText()).isEqualTo("auth_ok");
      int passed = 0;
      while (true) {
        socket.send(inference);
        JsonNode last = socket
            .until(frame -> Set.of("done", "error").contains(frame.path("type").asText()))
            .getLast();
        String refusal = last.at("/error/code").asText();
        if (last.path("type").asText().equals("done")) {
          passed++;
        } else if (!refusal.equals("concurrency_limit_exceeded")) {
          assertThat(refusal).as(last.toString()).isEqualTo("budget_exceeded");
          return passed;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  @Order(5)
  void aKeyRevokedOnOneNodeIsRefusedOnTheOthersWithin100Milliseconds() {
    String org = cluster.operator().createOrganization("seed");
    JsonNode created = cluster.operator().createApiKey(org, 10_000, "admin");
    String key = created.get("token").asText();
    ServerProcess b = cluster.nodes.get(1);
    ServerProcess c = cluster.nodes.get(2);
    // Both nodes have the key in their caches, and have refused a key before (the refusal's
    // code is loaded: what is measured is the revocation reaching them).
    for (ServerProcess node : List.of(b, c)) {
      assertThat(node.http().get("/v1/organizations/" + org).bearer(key).send().status())
          .isEqualTo(200);
      assertThat(node.http()
              .get("/v1/organizations/" + org)
              .bearer("sk-unknown")
              .send()
              .status())
          .isEqualTo(401);
    }
    Http.Response revoked = cluster
        .operator()
        .send(cluster
            .nodes
            .get(0)
            .http()
            .delete(
                "/v1/organizations/" + org + "/api-keys/" + created.get("id").asText()));
    assertThat(revoked.status()).as(revoked.text()).isIn(200, 204);
    Future<Long> onB = clients.submit(() -> millisUntil(
        () -> b.http().get("/v1/organizations/" + org).bearer(key).send().status() == 401));
    Future<Long> onC = clients.submit(() -> millisUntil(
        () -> c.http().get("/v1/organizations/" + org).bearer(key).send().status() == 401));
    long bMillis = join(onB);
    long cMillis = join(onC);
    System.out.printf("revocation: refused on B after %d ms, on C after %d ms%n", bMillis, cMillis);
    assertThat(bMillis).isLessThan(100);
    assertThat(cMillis).isLessThan(100);
  }

  @Test
  @Order(6)
  void aMemoryWrittenOnOneNodeIsFoundOnTheOthersAndTheLagIsMeasured() {
    String org = cluster.operator().createOrganization("seed");
    String token =
        cluster.operator().token(org, null, "memory:read", "memory:write", "memory:control");
    List<Long> lags = new ArrayList<>();
    List<Long> local = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      String word = "zq" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
      Http.Response written = cluster
          .nodes
          .get(0)
          .http()
          .post("/v1/memory")
          .bearer(token)
          .json(Json.write(Map.of("text", "The code name of project " + i + " is " + word)))
          .send();
      assertThat(written.status()).as(written.text()).isIn(200, 201);
      String id = written.json().get("id").asText();
      long since = System.nanoTime();
      List<Future<Long>> others = new ArrayList<>();
      for (ServerProcess other : cluster.nodes.subList(1, 3)) {
        others.add(clients.submit(() -> millisUntil(() -> found(other, token, word, id))));
      }
      others.forEach(ThreeNodesBehindHaproxyTest::join);
      lags.add((System.nanoTime() - since) / 1_000_000);
      // The same search on the node that wrote it: what a retrieval alone takes here, no lag.
      local.add(millisUntil(() -> found(cluster.nodes.get(0), token, word, id)));
    }
    System.out.println("until found on both other nodes, ms: " + lags);
    System.out.println("one retrieval on the writing node, ms: " + local);
    Collections.sort(lags);
    long p50 = lags.get(lags.size() / 2);
    long p99 = lags.get(lags.size() - 1);
    Collections.sort(local);
    System.out.printf(
        "index lag between nodes: p50 %d ms, p99 %d ms (%d writes; a retrieval alone: p50 %d ms)%n",
        p50, p99, lags.size(), local.get(local.size() / 2));
    assertThat(p99).isLessThan(5_000);
  }

  @Test
  @Order(7)
  void reflectionRunsOnOneNodeAtATime() {
    String org = cluster.operator().createOrganization("seed");
    String key =
        cluster.operator().createApiKey(org, 10_000, "admin").get("token").asText();
    String token = cluster.operator().token(org, null, "memory:read", "memory:write");
    for (int i = 0; i < 20; i++) { // something to examine, so a run takes a while
      cluster
          .balanced()
          .post("/v1/memory")
          .bearer(token)
          .json(Json.write(Map.of("text", "Customer " + i + " prefers invoices by email")))
          .send();
    }
    List<String> runs = new ArrayList<>();
    int refused = 0;
    for (int round = 0; round < 4; round++) {
      List<Future<Http.Response>> starts = new ArrayList<>();
      for (ServerProcess node : cluster.nodes) {
        starts.add(clients.submit(() -> node.http()
            .post("/api/memory/reflection/run")
            .bearer(key)
            .json("{\"dryRun\":true}")
            .send()));
      }
      for (Future<Http.Response> start : starts) {
        Http.Response response = join(start);
        assertThat(response.status()).as(response.text()).isIn(202, 409);
        if (response.status() == 202) {
          runs.add(response.json().get("runId").asText());
        } else {
          refused++;
        }
      }
      runs.forEach(
          run -> millisUntil(() -> !audit(key, run).get("status").asText().equals("running")));
    }
    assertThat(refused)
        .as("starts refused while another node's run held the lease")
        .isPositive();
    // However many started, no two ran at the same time, on whichever nodes they ran.
    List<JsonNode> audits = runs.stream().map(run -> audit(key, run)).toList();
    for (int i = 0; i < audits.size(); i++) {
      for (int j = i + 1; j < audits.size(); j++) {
        JsonNode x = audits.get(i);
        JsonNode y = audits.get(j);
        boolean apart = !at(x, "finishedAt").isAfter(at(y, "startedAt"))
            || !at(y, "finishedAt").isAfter(at(x, "startedAt"));
        assertThat(apart).as(x + "\n" + y).isTrue();
      }
    }
  }

  private static java.time.Instant at(JsonNode audit, String field) {
    return java.time.Instant.parse(audit.get(field).asText());
  }

  private JsonNode audit(String key, String run) {
    return cluster
        .nodes
        .get(2)
        .http()
        .get("/api/memory/reflection/audits/" + run)
        .bearer(key)
        .send()
        .json()
        .get("audit");
  }

  @Test
  @Order(8)
  void redisStoppedAndStartedUnderTrafficCostsNo500AndLosesNothing() throws Exception {
    String org = cluster.operator().createOrganization("seed");
    String key = cluster
        .operator()
        .createApiKey(org, 100_000, "admin", "inference")
        .get("token")
        .asText();
    String token = cluster.operator().token(org, null, "memory:read", "memory:write");
    AtomicBoolean running = new AtomicBoolean(true);
    Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    List<String> remembered = new CopyOnWriteArrayList<>();
    List<Future<?>> traffic = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      int client = i;
      traffic.add(clients.submit(() -> {
        int n = 0;
        while (running.get()) {
          Http.Response response = client % 2 == 0
              ? cluster
                  .balanced()
                  .post("/v1/chat/completions")
                  .bearer(key)
                  .json(chatBody("hello " + n, false))
                  .send()
              : cluster
                  .balanced()
                  .post("/v1/memory")
                  .bearer(token)
                  .json(Json.write(Map.of("text", "Outage note " + client + "-" + n)))
                  .send();
          statuses.computeIfAbsent(response.status(), s -> new AtomicInteger()).incrementAndGet();
          if (client % 2 == 1 && response.status() < 300) {
            remembered.add(response.json().get("id").asText());
          }
          n++;
        }
        return null;
      }));
    }
    EngramCluster.sleep(1_000);
    cluster.stopRedis();
    ServerProcess node = cluster.nodes.get(0);
    millisUntil(() -> ready(node).at("/checks/redis/status").asText().equals("unavailable"));
    assertThat(node.http().get("/metrics").bearer(TestServer.ADMIN_KEY).send().text())
        .contains("engram_redis_available 0.0");
    EngramCluster.sleep(2_000);
    cluster.startRedis();
    for (ServerProcess each : cluster.nodes) {
      millisUntil(() -> ready(each).at("/checks/redis/status").asText().equals("ok"));
    }
    EngramCluster.sleep(1_000);
    running.set(false);
    for (Future<?> client : traffic) {
      join(client);
    }
    System.out.println("statuses while Redis went away and came back: " + statuses);
    assertThat(statuses.keySet()).as(statuses.toString()).containsOnly(200, 201);
    assertThat(remembered).isNotEmpty();
    for (String id : remembered) {
      assertThat(cluster
              .nodes
              .get(2)
              .http()
              .get("/v1/memory/" + id)
              .bearer(token)
              .send()
              .status())
          .isEqualTo(200);
    }
    assertThat(node.http().get("/metrics").bearer(TestServer.ADMIN_KEY).send().text())
        .contains("engram_redis_available 1.0");
  }

  @Test
  @Order(9)
  void aNodeKilledMidStreamLosesItsSlotsWithinTheLeaseAndTheOthersAnswer() throws Exception {
    String key = keyOfAnOrganizationRunningAtMost(6);
    // Six long streams, straight to the nodes: two on each.
    cluster.upstream.script(
        FakeUpstream.Script.NORMAL.pieces(words(400)).interval(50)); // 20 s per answer
    List<InputStream> streams = new ArrayList<>();
    try {
      for (int i = 0; i < 6; i++) {
        streams.add(openStream(cluster.nodes.get(i % 3), key));
      }
      assertThat(chat(cluster.nodes.get(1), key).at("/error/code").asText())
          .isEqualTo("concurrency_limit_exceeded");
      ServerProcess killed = cluster.nodes.get(0);
      killed.kill9();
      long since = System.nanoTime();
      // The balancer's clients see the other nodes answer, from the first request on.
      for (int i = 0; i < 10; i++) {
        assertThat(cluster.balanced().get("/v1/health/ready").send().status()).isEqualTo(200);
      }
      // The dead node's two slots lapse within the lease; the four live streams keep theirs.
      cluster.upstream.script(FakeUpstream.Script.NORMAL);
      long freed = millisUntil(() -> chat(cluster.nodes.get(1), key).has("choices"));
      long afterKill = (System.nanoTime() - since) / 1_000_000;
      System.out.printf(
          "slots of the killed node free after %d ms (lease %d s)%n",
          afterKill, EngramCluster.SLOT_LEASE_SECONDS);
      assertThat(afterKill).isLessThan((EngramCluster.SLOT_LEASE_SECONDS + 2) * 1_000L);
      assertThat(freed).isGreaterThan(0);
      // Slots taken between two renewals lapse up to one renewal apart: give the last its time.
      EngramCluster.sleep(EngramCluster.SLOT_LEASE_SECONDS * 1_000L / 3 + 200);
      cluster.upstream.script(FakeUpstream.Script.NORMAL.pieces(words(400)).interval(50));
      List<InputStream> more =
          List.of(openStream(cluster.nodes.get(1), key), openStream(cluster.nodes.get(2), key));
      streams.addAll(more);
      assertThat(chat(cluster.nodes.get(2), key).at("/error/code").asText())
          .as("two freed, four still held by live streams")
          .isEqualTo("concurrency_limit_exceeded");
    } finally {
      cluster.upstream.script(FakeUpstream.Script.NORMAL);
      for (InputStream stream : streams) {
        try {
          stream.close();
        } catch (IOException e) {
          // the node that held it is gone
        }
      }
    }
  }

  // ---- helpers

  /**
   * A new organization whose configuration (set on node 1) allows {@code slots} inference requests
   * at once, and an API key of it. The other nodes drop their copy of the settings when node 1's
   * change message arrives (milliseconds), not at their next poll (a second).
   */
  private String keyOfAnOrganizationRunningAtMost(int slots) {
    String org = cluster.operator().createOrganization("seed");
    String key = cluster
        .operator()
        .createApiKey(org, 10_000, "admin", "inference")
        .get("token")
        .asText();
    Http.Response quota = cluster
        .operator()
        .send(cluster
            .nodes
            .get(0)
            .http()
            .patch("/v1/organizations/" + org + "/config")
            .json("{\"quotas\":{\"max_concurrent_requests\":" + slots + "}}"));
    assertThat(quota.status()).as(quota.text()).isEqualTo(200);
    EngramCluster.sleep(300);
    return key;
  }

  private JsonNode chat(String key, String content, boolean small) {
    Http.Response response = cluster
        .balanced()
        .post("/v1/chat/completions")
        .bearer(key)
        .json(chatBody(content, small))
        .send();
    assertThat(response.status()).as(response.text()).isIn(200, 429);
    return response.json();
  }

  private static JsonNode chat(ServerProcess node, String key) {
    Http.Response response = node.http()
        .post("/v1/chat/completions")
        .bearer(key)
        .json(chatBody("one more", false))
        .send();
    assertThat(response.status()).as(response.text()).isIn(200, 429);
    return response.json();
  }

  private static String chatBody(String content, boolean small) {
    return "{\"model\":\"engram-chat\",\"memory\":false,"
        + (small ? "\"max_tokens\":64," : "")
        + "\"messages\":[{\"role\":\"user\",\"content\":" + Json.write(content) + "}]}";
  }

  /** A streaming chat held open: its first event has arrived, so its slot is taken. */
  private static InputStream openStream(ServerProcess node, String key) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.port + "/v1/chat/completions"))
        .header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"engram-chat\",\"memory\":false,"
            + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"stream\"}]}"))
        .build();
    HttpResponse<InputStream> response =
        STREAMS.send(request, HttpResponse.BodyHandlers.ofInputStream());
    InputStream body = response.body();
    if (response.statusCode() != 200) {
      throw new AssertionError(
          response.statusCode() + ": " + new String(body.readAllBytes(), StandardCharsets.UTF_8));
    }
    assertThat(body.read()).isNotNegative();
    return body;
  }

  private static String[] words(int count) {
    String[] words = new String[count];
    for (int i = 0; i < count; i++) {
      words[i] = " w" + i;
    }
    return words;
  }

  private static boolean found(ServerProcess node, String token, String word, String id) {
    Http.Response response = node.http()
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json(Json.write(Map.of("query", "project code name " + word, "limit", 3)))
        .send();
    return response.status() == 200 && response.text().contains(id);
  }

  private static JsonNode ready(ServerProcess node) {
    return node.http().get("/v1/health/ready").send().json();
  }

  /** Runs {@code count} calls on 30 clients at once and returns their results in order. */
  private <T> List<T> inParallel(int count, java.util.function.IntFunction<T> call) {
    List<Future<T>> futures = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      int n = i;
      futures.add(clients.submit(() -> call.apply(n)));
    }
    List<T> results = new ArrayList<>();
    futures.forEach(future -> results.add(join(future)));
    return results;
  }

  private static <T> T join(Future<T> future) {
    try {
      return future.get(120, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Polls until the condition holds (every 2 ms, at most 20 s); returns the milliseconds taken. */
  private static long millisUntil(Supplier<Boolean> condition) {
    long since = System.nanoTime();
    long deadline = since + Duration.ofSeconds(20).toNanos();
    while (!condition.get()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 20 s");
      }
      EngramCluster.sleep(2);
    }
    return (System.nanoTime() - since) / 1_000_000;
  }

  /** The rate limit counts in one-minute windows: start where the 150 requests fit in one. */
  private static void awaitRoomInTheMinute() {
    while (LocalTime.now().getSecond() > 45) {
      EngramCluster.sleep(500);
    }
  }
}
