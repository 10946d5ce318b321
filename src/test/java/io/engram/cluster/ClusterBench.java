package io.engram.cluster;

import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The cluster's measurements for docs/benchmarks.md (bench/cluster-bench.sh): the index lag
 * between nodes while one node takes a steady stream of writes, and the gateway's throughput
 * through one node against three behind HAProxy. Not a test: it prints what it measured.
 */
public final class ClusterBench {
  /** Write rates of the lag measurement: one the machine keeps up with, and the 200. */
  private static final int[] WRITES_PER_SECOND = {20, 200};

  private static final int LAG_SECONDS = 30;
  private static final int LOAD_SECONDS = 20;
  private static final int CONNECTIONS = 16;

  private ClusterBench() {}

  public static void main(String[] args) throws Exception {
    // -Dcluster.index=solr: the nodes' memory index on a two-node SolrCloud (each write indexed
    // once, by its node) instead of each node's own Lucene copy (each node indexes every write).
    io.engram.support.SolrCluster solr = "solr".equals(System.getProperty("cluster.index"))
        ? io.engram.support.SolrCluster.start(2)
        : null;
    Map<String, String> env = solr == null
        ? Map.of()
        : Map.of(
            "ENGRAM_MEMORY_INDEX", "solr",
            "ENGRAM_SOLR_URL", solr.urls(),
            "ENGRAM_SOLR_COLLECTION", "cluster-bench");
    try (EngramCluster cluster = new EngramCluster(env)) {
      run(cluster);
    } finally {
      if (solr != null) {
        solr.close();
      }
    }
  }

  /** The write rates measured: -Dcluster.rates=20,50 or the defaults. */
  private static int[] rates() {
    String rates = System.getProperty("cluster.rates", "");
    return rates.isBlank()
        ? WRITES_PER_SECOND
        : java.util.Arrays.stream(rates.split(",")).mapToInt(Integer::parseInt).toArray();
  }

  private static void run(EngramCluster cluster) throws Exception {
    cluster.awaitBalanced();
    String org = cluster.operator().createOrganization("scale");
    String token = cluster.operator().token(org, null, "memory:read", "memory:write");
    String key = cluster
        .operator()
        .createApiKey(org, 1_000_000, "inference")
        .get("token")
        .asText();
    for (int rate : rates()) {
      indexLag(cluster, token, rate);
    }
    if (Boolean.parseBoolean(System.getProperty("cluster.throughput", "true"))) {
      throughput("one node", "http://127.0.0.1:" + cluster.nodes.get(0).port, key);
      throughput("three nodes behind HAProxy", cluster.balancedUrl(), key);
    }
  }

  /**
   * Writes at {@code perSecond} to node 1 for {@link #LAG_SECONDS}; two writes a second carry a
   * word of their own, and the time until node 2's retrieval finds it is the lag (one
   * retrieval's own time included; measured alone on node 1 for comparison).
   */
  private static void indexLag(EngramCluster cluster, String token, int perSecond)
      throws Exception {
    Http writer = cluster.nodes.get(0).http();
    Http reader = cluster.nodes.get(1).http();
    ExecutorService writes = Executors.newFixedThreadPool(32);
    ExecutorService probes = Executors.newFixedThreadPool(8);
    ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
    List<Long> lags = Collections.synchronizedList(new ArrayList<>());
    List<Long> alone = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger written = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    AtomicInteger sequence = new AtomicInteger();
    clock.scheduleAtFixedRate(
        () -> writes.execute(() -> {
          int n = sequence.incrementAndGet();
          String word = n % Math.max(1, perSecond / 2) == 0
              ? "zq" + UUID.randomUUID().toString().substring(0, 8)
              : null;
          Http.Response response = writer
              .post("/v1/memory")
              .bearer(token)
              .json(Json.write(Map.of(
                  "text",
                  "Note " + n + " about the renewal of account " + (n * 7919 % 10_007)
                      + (word == null ? "" : " with code name " + word))))
              .send();
          if (response.status() >= 300) {
            failed.incrementAndGet();
            return;
          }
          written.incrementAndGet();
          if (word != null) {
            String id = response.json().get("id").asText();
            long since = System.nanoTime();
            probes.execute(() -> {
              // Looked for every 20 ms: each look is a retrieval (an embedding), and a tighter loop
              // on more samples would take the CPU the writes need.
              while (!found(reader, token, word, id)) {
                if (System.nanoTime() - since > TimeUnit.SECONDS.toNanos(30)) {
                  return;
                }
                pause(20);
              }
              lags.add((System.nanoTime() - since) / 1_000_000);
              long start = System.nanoTime();
              found(writer, token, word, id);
              alone.add((System.nanoTime() - start) / 1_000_000);
            });
          }
        }),
        0,
        1_000_000 / perSecond,
        TimeUnit.MICROSECONDS);
    Thread.sleep(LAG_SECONDS * 1_000L);
    clock.shutdownNow();
    // Writes the machine could not keep up with are dropped, not left to run into what follows.
    int dropped = writes.shutdownNow().size();
    writes.awaitTermination(60, TimeUnit.SECONDS);
    probes.shutdown();
    probes.awaitTermination(60, TimeUnit.SECONDS);
    System.out.println("writes still queued at the end, dropped: " + dropped);
    System.out.printf(
        "index lag: %d writes in %d s (%.0f/s asked %d/s, %d failed); lag until found on another"
            + " node p50 %d ms, p99 %d ms (%d samples); one retrieval alone p50 %d ms%n",
        written.get(),
        LAG_SECONDS,
        written.get() / (double) LAG_SECONDS,
        perSecond,
        failed.get(),
        percentile(lags, 50),
        percentile(lags, 99),
        lags.size(),
        percentile(alone, 50));
  }

  /** wrk with bench/chat.lua (memory off), {@link #CONNECTIONS} connections, after a warm-up. */
  private static void throughput(String label, String baseUrl, String key) throws Exception {
    wrk(baseUrl, key, 5); // warm-up
    System.out.println("chat, memory off, " + label + ":\n" + wrk(baseUrl, key, LOAD_SECONDS));
  }

  private static String wrk(String baseUrl, String key, int seconds) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(
            "wrk",
            "-t2",
            "-c" + CONNECTIONS,
            "-d" + seconds + "s",
            "--latency",
            "-s",
            "bench/chat.lua",
            baseUrl + "/v1/chat/completions")
        .redirectErrorStream(true);
    builder.environment().putAll(Map.of("AUTH", key, "MODEL", "engram-chat", "MEMORY", "off"));
    Process wrk = builder.start();
    String output = new String(wrk.getInputStream().readAllBytes());
    wrk.waitFor();
    return output;
  }

  private static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static boolean found(Http node, String token, String word, String id) {
    Http.Response response = node.post("/v1/memory/retrieve")
        .bearer(token)
        .json(Json.write(Map.of("query", "code name " + word, "limit", 3)))
        .send();
    return response.status() == 200 && response.text().contains(id);
  }

  private static long percentile(List<Long> values, int percent) {
    if (values.isEmpty()) {
      return -1;
    }
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(Math.min(sorted.size() - 1, sorted.size() * percent / 100));
  }
}
