package io.engram.memory.solr;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.BesideTheRest;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.ServerProcess;
import io.engram.support.SolrCluster;
import io.engram.support.TestServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The memory index on a real SolrCloud cluster (two Solr nodes, one ZooKeeper, each a process),
 * behind Engram nodes sharing PostgreSQL, through the HTTP API: what one node writes the other
 * finds at once; an organization's documents live on one shard; an engine node killed and
 * restarted loses nothing acknowledged; an engine that cannot be reached answers 503 and chats go
 * on without memory; an existing deployment moves from the embedded index by starting with
 * ENGRAM_MEMORY_INDEX=solr.
 */
@BesideTheRest
class SolrMemoryIndexTest {
  static SolrCluster solr;
  static FakeUpstream upstream;

  @BeforeAll
  static void start() {
    solr = SolrCluster.start(2);
    upstream = new FakeUpstream();
  }

  @AfterAll
  static void stop() {
    if (upstream != null) {
      upstream.close();
    }
    if (solr != null) {
      solr.close();
    }
  }

  /** A node on Solr, each test with a collection of its own. */
  private static TestServer.Builder node(String collection) {
    return TestServer.builder()
        .env("RATE_LIMIT_REQUESTS", "100000")
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", "upstream-model")
        .env("DEFAULT_MODEL", "engram-chat")
        .env("ENGRAM_MEMORY_INDEX", "solr")
        .env("ENGRAM_SOLR_URL", solr.urls())
        .env("ENGRAM_SOLR_COLLECTION", collection)
        .env("ENGRAM_SOLR_SHARDS", "2")
        .env("ENGRAM_SOLR_REPLICAS", "2");
  }

  private static String collection() {
    return "memory-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static String remember(TestServer server, String token, String body) {
    Http.Response created =
        server.http.post("/v1/memory").bearer(token).json(body).send();
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json().get("id").asText();
  }

  private static List<String> found(TestServer server, String token, String query, String more) {
    Http.Response found = server
        .http
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json("{\"query\":\"" + query + "\",\"limit\":10,\"recordUse\":false" + more + "}")
        .send();
    assertThat(found.status()).as(found.text()).isEqualTo(200);
    return found.json().get("memories").findValuesAsText("id");
  }

  private static String token(TestServer server, String org) {
    return server.token(
        org,
        null,
        "inference:chat",
        "memory:read",
        "memory:write",
        "memory:control",
        "memory:delete");
  }

  private static JsonNode solrSelect(String collection, String query) throws Exception {
    String url = solr.url(0) + "/" + collection + "/select?wt=json&rows=1000&fl=id,[shard]&q="
        + java.net.URLEncoder.encode(query, java.nio.charset.StandardCharsets.UTF_8);
    HttpResponse<String> response = HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    return io.engram.platform.json.Json.read(response.body(), JsonNode.class);
  }

  @Test
  void whatOneNodeWritesTheOtherFindsAtOnceAndAnOrganizationLivesOnOneShard() throws Exception {
    String collection = collection();
    try (TestServer first = node(collection).postgres().start();
        TestServer second = node(collection).sharing(first).start()) {
      String acme = first.createOrganization("growth");
      String globex = first.createOrganization("growth");
      String acmeToken = token(first, acme);
      String globexToken = token(first, globex);
      String ferry = remember(
          first,
          acmeToken,
          "{\"text\":\"The Lisbon ferry leaves at seven from Cais do Sodre.\","
              + "\"metadata\":{\"team\":\"travel\",\"priority\":3}}");
      String invoice = remember(
          first,
          acmeToken,
          "{\"text\":\"Invoices are paid on the fifteenth of each month.\","
              + "\"metadata\":{\"team\":\"finance\",\"priority\":1}}");
      String adas = remember(
          first, acmeToken, "{\"text\":\"Ada takes the ferry on Fridays.\",\"userId\":\"ada\"}");
      String globexFerry = remember(
          first, globexToken, "{\"text\":\"The Globex ferry to Springfield leaves at noon.\"}");
      for (int i = 0; i < 20; i++) {
        remember(first, globexToken, "{\"text\":\"Globex note " + i + " about shipping.\"}");
      }
      // The very next request, on the other node: found, with no wait.
      assertThat(found(second, acmeToken, "When does the ferry leave?", ""))
          .contains(ferry)
          .doesNotContain(globexFerry, adas);
      assertThat(found(second, acmeToken, "When does the ferry leave?", ",\"userId\":\"ada\""))
          .contains(ferry, adas);
      assertThat(found(second, globexToken, "When does the ferry leave?", ""))
          .contains(globexFerry)
          .doesNotContain(ferry, invoice, adas);
      // Metadata filters run inside Solr.
      assertThat(found(
              second, acmeToken, "ferry invoices paid", ",\"filters\":{\"team\":\"finance\"}"))
          .containsExactly(invoice);
      assertThat(found(
              second, acmeToken, "ferry invoices paid", ",\"filters\":{\"priority\":{\"gte\":2}}"))
          .containsExactly(ferry);
      // Every document of an organization is on one shard (compositeId routing by organization).
      for (String org : List.of(acme, globex)) {
        JsonNode docs = solrSelect(collection, "org:" + org).path("response").path("docs");
        Set<String> shards = new HashSet<>();
        docs.forEach(doc -> shards.add(doc.path("[shard]").asText()));
        assertThat(docs.size()).as(org).isGreaterThanOrEqualTo(3);
        assertThat(shards).as(org + " on " + shards).hasSize(1);
        // Engram finds the same shard (compositeId's hash of the organization)...
        SolrShards layout = new SolrCollection(
                new SolrConnection(
                    List.of(URI.create(solr.url(0))), "", "", java.time.Duration.ofSeconds(10)),
                collection,
                2,
                2)
            .shards();
        assertThat(shards).containsExactly(layout.shardOf(org).name());
      }
      // ...and sends its searches straight to a core of it, none through the collection.
      assertThat(second.metric("engram_memory_index_searches_total", "route=\"shard\""))
          .isGreaterThan(0);
      assertThat(second.metric("engram_memory_index_searches_total", "route=\"collection\""))
          .isEqualTo(0);
      // A deletion on the second node: gone on the first at once.
      Http.Response deleted =
          second.http.delete("/v1/memory/" + ferry).bearer(acmeToken).send();
      assertThat(deleted.status()).as(deleted.text()).isIn(200, 204);
      assertThat(found(first, acmeToken, "When does the ferry leave?", "")).doesNotContain(ferry);
      assertThat(second.http.get("/v1/health/ready").send().status()).isEqualTo(200);
      assertThat(second.metric("engram_memory_index_ready", "engine=\"solr\"")).isEqualTo(1.0);
    }
  }

  /**
   * Writers at once share soft commits (a group commit), and still each write is found by the
   * other node's very next retrieval after it was acknowledged.
   */
  @Test
  void concurrentWritesShareSoftCommitsAndEachIsFoundAtOnceOnTheOtherNode() throws Exception {
    String collection = collection();
    try (TestServer first = node(collection).postgres().start();
        TestServer second = node(collection).sharing(first).start()) {
      String org = first.createOrganization("growth");
      String token = token(first, org);
      java.util.concurrent.ExecutorService writers =
          java.util.concurrent.Executors.newFixedThreadPool(8);
      List<java.util.concurrent.Future<String>> misses = new ArrayList<>();
      for (int i = 0; i < 48; i++) {
        String word = "zq" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        int n = i;
        misses.add(writers.submit(() -> {
          String id = remember(
              first, token, "{\"text\":\"Shipment " + n + " carries the code " + word + ".\"}");
          return found(second, token, word, "").contains(id) ? null : word;
        }));
      }
      List<String> missed = new ArrayList<>();
      for (java.util.concurrent.Future<String> miss : misses) {
        if (miss.get() != null) {
          missed.add(miss.get());
        }
      }
      writers.shutdown();
      assertThat(missed).as("writes not found at once on the other node").isEmpty();
      // Writers that wait share an update request, and one soft commit covers every update sent
      // before it.
      double updates = first.metric("engram_memory_index_updates_total", "");
      double commits = first.metric("engram_memory_index_commits_total", "");
      assertThat(updates).isPositive().isLessThanOrEqualTo(48);
      assertThat(commits).isPositive().isLessThanOrEqualTo(updates);
      System.out.printf(
          "48 concurrent writes: %.0f updates, %.0f soft commits%n", updates, commits);
    }
  }

  @Test
  void anEngineNodeKilledAndRestartedLosesNothingAcknowledged() {
    String collection = collection();
    try (TestServer server = node(collection).postgres().start()) {
      String org = server.createOrganization("growth");
      String token = token(server, org);
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        ids.add(remember(server, token, "{\"text\":\"Before the outage, fact " + i + ".\"}"));
      }
      solr.kill(1);
      try {
        for (int i = 0; i < 5; i++) {
          ids.add(remember(server, token, "{\"text\":\"During the outage, fact " + i + ".\"}"));
        }
        // Every acknowledged memory is found while the node is away (the catch-up indexes what
        // a write could not, as soon as each shard has its leader on the living node).
        awaitFound(server, token, "fact outage", ids);
      } finally {
        solr.restart(1);
      }
      for (int i = 0; i < 5; i++) {
        ids.add(remember(server, token, "{\"text\":\"After the outage, fact " + i + ".\"}"));
      }
      awaitFound(server, token, "fact outage", ids);
    }
  }

  /**
   * An Engram node killed with -9 among its writes: some were committed to the database and never
   * sent to Solr. After a restart the catch-up indexes them: Solr holds exactly the organization's
   * durable memories, and every acknowledged one is found.
   */
  @Test
  void anEngramNodeKilledAmongItsWritesLeavesNothingUnindexed() throws Exception {
    String postgres = io.engram.support.TestDatabases.freshPostgresUrl();
    java.nio.file.Path dataDir = java.nio.file.Files.createTempDirectory("engram-solr-kill");
    String collection = collection();
    java.util.Map<String, String> env = java.util.Map.of(
        "DATABASE_URL",
        postgres,
        "ENGRAM_SECRET_KEY",
        "5017".repeat(16),
        "ENGRAM_DATA_DIR",
        dataDir.toString(),
        "ENGRAM_ADMIN_KEY",
        TestServer.ADMIN_KEY,
        "RATE_LIMIT_REQUESTS",
        "1000000",
        "ENGRAM_MEMORY_INDEX",
        "solr",
        "ENGRAM_SOLR_URL",
        solr.urls(),
        "ENGRAM_SOLR_COLLECTION",
        collection);
    List<String> acknowledged = java.util.Collections.synchronizedList(new ArrayList<>());
    String org;
    String token;
    try (ServerProcess node =
        ServerProcess.start(env, "serve").awaitHealthy(java.time.Duration.ofSeconds(120))) {
      Http http = node.http();
      io.engram.support.Operator operator =
          new io.engram.support.Operator(http, TestServer.ADMIN_KEY);
      org = operator.createOrganization("growth");
      token = operator.token(org, null, "memory:read", "memory:write");
      java.util.concurrent.ExecutorService writers =
          java.util.concurrent.Executors.newFixedThreadPool(4);
      java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
      for (int w = 0; w < 4; w++) {
        writers.execute(() -> {
          while (!Thread.currentThread().isInterrupted()) {
            Http.Response written;
            try {
              written = http.post("/v1/memory")
                  .bearer(token)
                  .json("{\"text\":\"Harbour crane inspection " + n.incrementAndGet() + ".\"}")
                  .send();
            } catch (java.io.UncheckedIOException | IllegalStateException e) {
              return; // the node is gone
            }
            if (written.status() == 201) {
              acknowledged.add(written.json().get("id").asText());
            }
          }
        });
      }
      ServerProcess.sleep(4_000);
      node.kill9();
      writers.shutdownNow();
      writers.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
    }
    assertThat(acknowledged).hasSizeGreaterThan(5);
    try (ServerProcess again =
        ServerProcess.start(env, "serve").awaitHealthy(java.time.Duration.ofSeconds(120))) {
      long deadline = System.nanoTime() + 60_000_000_000L;
      long durable = -1;
      long held = -2;
      while (System.nanoTime() < deadline) {
        durable = durableMemories(postgres, org);
        held = solrSelect(collection, "org:" + org)
            .path("response")
            .path("numFound")
            .asLong();
        if (durable == held) {
          break;
        }
        ServerProcess.sleep(500);
      }
      assertThat(held)
          .as("Solr's documents against the database's durable memories")
          .isEqualTo(durable);
      assertThat(durable).isGreaterThanOrEqualTo(acknowledged.size());
      Http.Response found = again
          .http()
          .post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"harbour crane inspection\",\"limit\":100,\"recordUse\":false}")
          .send();
      assertThat(found.status()).as(found.text()).isEqualTo(200);
    } finally {
      io.engram.support.TestDatabases.drop(postgres);
    }
  }

  private static long durableMemories(String postgres, String org) throws Exception {
    try (java.sql.Connection connection = java.sql.DriverManager.getConnection(postgres);
        java.sql.PreparedStatement count = connection.prepareStatement(
            "SELECT COUNT(*) FROM memories WHERE org_id = ? AND state = 'durable'")) {
      count.setString(1, org);
      try (java.sql.ResultSet rows = count.executeQuery()) {
        rows.next();
        return rows.getLong(1);
      }
    }
  }

  private static void awaitFound(TestServer server, String token, String query, List<String> ids) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    List<String> found = List.of();
    String last = "";
    while (System.nanoTime() < deadline) {
      Http.Response answer = server
          .http
          .post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"" + query + "\",\"limit\":50,\"recordUse\":false}")
          .send();
      assertThat(answer.status()).as(answer.text()).isIn(200, 503);
      last = answer.status() + " " + answer.text();
      if (answer.status() == 200) {
        found = answer.json().get("memories").findValuesAsText("id");
        if (found.containsAll(ids)) {
          return;
        }
      }
      ServerProcess.sleep(500);
    }
    assertThat(found).as("every acknowledged memory found; last answer " + last).containsAll(ids);
  }

  @Test
  void anEngineThatCannotBeReachedAnswers503AndChatsGoOnWithoutMemory() {
    try (TestServer server = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", "upstream-model")
        .env("DEFAULT_MODEL", "engram-chat")
        .env("ENGRAM_MEMORY_INDEX", "solr")
        .env("ENGRAM_SOLR_URL", "http://127.0.0.1:" + ServerProcess.freePort() + "/solr")
        .env("ENGRAM_SOLR_TIMEOUT_MS", "1000")
        .start()) {
      String org = server.createOrganization("growth");
      String token = token(server, org);
      assertThat(server.http.get("/v1/health/ready").send().status()).isEqualTo(503);
      assertThat(server.metric("engram_memory_index_ready", "engine=\"solr\"")).isEqualTo(0.0);
      long started = System.nanoTime();
      Http.Response retrieval = server
          .http
          .post("/v1/memory/retrieve")
          .bearer(token)
          .json("{\"query\":\"anything\"}")
          .send();
      assertThat(retrieval.status()).as(retrieval.text()).isEqualTo(503);
      assertThat(retrieval.json().at("/error/code").asText()).isEqualTo("memory_index_unavailable");
      assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(10_000);
      // A write is still kept: the database is the record, and Solr takes it once it answers.
      Http.Response written = server
          .http
          .post("/v1/memory")
          .bearer(token)
          .json("{\"text\":\"Written while Solr was away.\"}")
          .send();
      assertThat(written.status()).as(written.text()).isEqualTo(201);
      Http.Response chat = server
          .http
          .post("/v1/chat/completions")
          .bearer(token)
          .json("{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\","
              + "\"content\":\"Where is the ferry?\"}]}")
          .send();
      assertThat(chat.status()).as(chat.text()).isEqualTo(200);
      assertThat(chat.header("X-Engram-Memory-Status")).isEqualTo("unavailable");
      assertThat(chat.header("X-Engram-Memory-Ids")).isEmpty();
      // The other chat routes say so the same way.
      for (String[] route : new String[][] {
        {"/v1/responses", "{\"model\":\"engram-chat\",\"input\":\"Where is the ferry?\"}"},
        {
          "/v1/messages",
          "{\"model\":\"engram-chat\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\","
              + "\"content\":\"Where is the ferry?\"}]}"
        }
      }) {
        Http.Response answered =
            server.http.post(route[0]).bearer(token).json(route[1]).send();
        assertThat(answered.status()).as(route[0] + " " + answered.text()).isEqualTo(200);
        assertThat(answered.header("X-Engram-Memory-Status")).as(route[0]).isEqualTo("unavailable");
      }
    }
  }

  @Test
  void aFullReindexMovesTheAliasWhileRetrievalGoesOn() throws Exception {
    String collection = collection();
    try (TestServer server = node(collection).postgres().start()) {
      String org = server.createOrganization("growth");
      String token = token(server, org);
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        ids.add(
            remember(server, token, "{\"text\":\"Lighthouse keeper's log, night " + i + ".\"}"));
      }
      java.util.concurrent.atomic.AtomicBoolean reindexing =
          new java.util.concurrent.atomic.AtomicBoolean(true);
      List<String> misses = java.util.Collections.synchronizedList(new ArrayList<>());
      java.util.concurrent.atomic.AtomicInteger asked =
          new java.util.concurrent.atomic.AtomicInteger();
      Thread reader = new Thread(() -> {
        while (reindexing.get()) {
          Http.Response answer = server
              .http
              .post("/v1/memory/retrieve")
              .bearer(token)
              .json("{\"query\":\"lighthouse keeper log night\",\"limit\":50,"
                  + "\"recordUse\":false}")
              .send();
          asked.incrementAndGet();
          if (answer.status() != 200
              || !answer.json().get("memories").findValuesAsText("id").containsAll(ids)) {
            misses.add(answer.status() + " " + answer.text());
          }
        }
      });
      reader.start();
      java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      int exit = new io.engram.AdminCommand(
              server.config(),
              new java.io.PrintStream(out, true),
              new java.io.PrintStream(err, true),
              java.io.InputStream.nullInputStream())
          .run(new String[] {"memory-index", "reindex"});
      reindexing.set(false);
      reader.join();
      assertThat(exit).as(err.toString()).isZero();
      assertThat(out.toString()).contains("to: " + collection + "_2", "memories: 40");
      assertThat(asked.get()).isPositive();
      assertThat(misses).as("retrievals during the reindex").isEmpty();
      JsonNode listed = solrAdmin("admin/collections?action=LIST");
      List<String> collections = new ArrayList<>();
      listed.path("collections").forEach(name -> collections.add(name.asText()));
      assertThat(collections).contains(collection + "_2").doesNotContain(collection + "_1");
      String after = remember(server, token, "{\"text\":\"The lighthouse lamp was replaced.\"}");
      assertThat(found(server, token, "lighthouse lamp replaced", "")).contains(after);
    }
  }

  private static JsonNode solrAdmin(String path) throws Exception {
    HttpResponse<String> response = HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(solr.url(0) + "/" + path + "&wt=json"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return io.engram.platform.json.Json.read(response.body(), JsonNode.class);
  }

  @Test
  void aDeploymentMovesFromTheEmbeddedIndexByStartingWithSolr() {
    String collection = collection();
    String org;
    String token;
    List<String> ids = new ArrayList<>();
    try (TestServer embedded =
            TestServer.builder().env("RATE_LIMIT_REQUESTS", "100000").postgres().start();
        TestServer moved = startMovedAfter(embedded, collection, ids)) {
      org = moved.createOrganization("growth");
      token = token(moved, org);
      String after = remember(moved, token, "{\"text\":\"Written after the move: the kiln.\"}");
      assertThat(found(moved, token, "kiln", "")).contains(after);
    }
  }

  /**
   * Writes memories on the embedded index, then starts a node of the same database on Solr: the
   * new collection is filled from the database, and what the first wrote is found on the second.
   */
  private static TestServer startMovedAfter(
      TestServer embedded, String collection, List<String> ids) {
    String org = embedded.createOrganization("growth");
    String token = token(embedded, org);
    for (int i = 0; i < 30; i++) {
      ids.add(remember(
          embedded, token, "{\"text\":\"Kiln firing log entry " + i + " at 1200 degrees.\"}"));
    }
    TestServer moved = node(collection).sharing(embedded).start();
    List<String> found = new ArrayList<>();
    Http.Response answer = moved
        .http
        .post("/v1/memory/retrieve")
        .bearer(token)
        .json("{\"query\":\"kiln firing log entry\",\"limit\":50,\"recordUse\":false}")
        .send();
    assertThat(answer.status()).as(answer.text()).isEqualTo(200);
    found.addAll(answer.json().get("memories").findValuesAsText("id"));
    assertThat(found).containsAll(ids);
    return moved;
  }
}
