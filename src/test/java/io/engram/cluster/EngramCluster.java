package io.engram.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.Operator;
import io.engram.support.ServerProcess;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import io.engram.support.ToolProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Three Engram processes on one PostgreSQL and one Redis of their own, behind HAProxy run with
 * {@code deploy/haproxy/haproxy.cfg}: what an operator runs, on one machine. The Redis can be
 * stopped and started again, a node killed.
 */
final class EngramCluster implements AutoCloseable {
  /** Short leases, so a killed node's slots come back within the test's patience. */
  static final int SLOT_LEASE_SECONDS = 3;

  private final String redisServer = ToolProcess.find("ENGRAM_REDIS_SERVER", "redis-server");
  private final String haproxy = ToolProcess.find("ENGRAM_HAPROXY", "haproxy");
  private final int redisPort = ServerProcess.freePort();
  private final String postgres = TestDatabases.freshPostgresUrl();
  final FakeUpstream upstream = new FakeUpstream();
  final List<ServerProcess> nodes = new ArrayList<>();
  private ToolProcess redis;
  private ToolProcess balancer;
  private final Path dataRoot;

  /** Variables every node gets besides the cluster's own (the memory index's engine, say). */
  private final Map<String, String> extraEnv;

  EngramCluster() throws IOException {
    this(Map.of());
  }

  EngramCluster(Map<String, String> extraEnv) throws IOException {
    this.extraEnv = Map.copyOf(extraEnv);
    dataRoot = Files.createTempDirectory("engram-cluster");
    startRedis();
    // The first node migrates the schema; the others start on it together.
    nodes.add(startNode(1).awaitHealthy(Duration.ofSeconds(120)));
    List<ServerProcess> others = List.of(startNode(2), startNode(3));
    others.forEach(node -> node.awaitHealthy(Duration.ofSeconds(120)));
    nodes.addAll(others);
    int port = ServerProcess.freePort();
    balancer = ToolProcess.start(
        List.of(haproxy, "-f", Path.of("deploy/haproxy/haproxy.cfg").toString(), "-db"),
        Map.of(
            "ENGRAM_LB_BIND", "127.0.0.1:" + port,
            "ENGRAM_NODE1", "127.0.0.1:" + nodes.get(0).port,
            "ENGRAM_NODE2", "127.0.0.1:" + nodes.get(1).port,
            "ENGRAM_NODE3", "127.0.0.1:" + nodes.get(2).port),
        port);
  }

  private ServerProcess startNode(int number) {
    Map<String, String> env = new HashMap<>();
    env.put("DATABASE_URL", postgres);
    env.put("REDIS_URL", "redis://127.0.0.1:" + redisPort);
    env.put("ENGRAM_ADMIN_KEY", TestServer.ADMIN_KEY);
    env.put(
        "ENGRAM_SECRET_KEY", "c1a5".repeat(16)); // one key for every node, as the database needs
    env.put("ENGRAM_DATA_DIR", dataRoot.resolve("node" + number).toString());
    env.put("ENGRAM_UPSTREAM_URL", upstream.baseUrl());
    env.put("DEFAULT_MODEL", "engram-chat");
    env.put("ENGRAM_TRUSTED_PROXIES", "127.0.0.1/32");
    env.put("ENGRAM_SLOT_LEASE_SECONDS", String.valueOf(SLOT_LEASE_SECONDS));
    // Tokens and keys without their own limit: the tests poll for what they wait on.
    env.put("RATE_LIMIT_REQUESTS", "100000");
    env.putAll(extraEnv);
    return ServerProcess.start(env, "serve");
  }

  /** Starts (or starts again) the cluster's Redis, empty: it keeps nothing on disk. */
  void startRedis() {
    redis = ToolProcess.start(
        List.of(
            redisServer,
            "--port",
            String.valueOf(redisPort),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no"),
        Map.of(),
        redisPort);
  }

  /** Stops Redis at once, as a crash would. */
  void stopRedis() {
    redis.close();
  }

  /** The balancer's address: where clients send their requests. */
  Http balanced() {
    return new Http("http://127.0.0.1:" + balancer.port);
  }

  /** The balancer's port (for WebSocket clients). */
  int balancedPort() {
    return balancer.port;
  }

  String balancedUrl() {
    return "http://127.0.0.1:" + balancer.port;
  }

  Operator operator() {
    return new Operator(nodes.get(0).http(), TestServer.ADMIN_KEY);
  }

  /** Waits until the balancer has every node up (its health checks: 2 in a row, 1 s apart). */
  void awaitBalanced() {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      List<CompletableFuture<Integer>> probes = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        probes.add(CompletableFuture.supplyAsync(
            () -> balanced().get("/v1/health/ready").send().status()));
      }
      if (probes.stream().allMatch(probe -> probe.join() == 200)) {
        sleep(2_500); // the checks' rise: 2 successes, 1 s apart
        return;
      }
      sleep(200);
    }
    throw new IllegalStateException("the balancer did not come up:\n" + balancer.log());
  }

  static void sleep(long millis) {
    ServerProcess.sleep(millis);
  }

  /** The balancer's log lines of requests that did not end well (for a failing test's output). */
  String balancerTrouble() {
    return balancer
        .log()
        .lines()
        .filter(line -> !line.contains(" 200 ")
            && !line.contains(" 201 ")
            && !line.contains(" 429 ")
            && !line.contains(" 202 "))
        .collect(java.util.stream.Collectors.joining("\n"));
  }

  @Override
  public void close() {
    if (balancer != null) {
      System.out.println("balancer, requests that did not end well:\n" + balancerTrouble());
      balancer.close();
    }
    nodes.forEach(ServerProcess::close);
    if (redis != null) {
      redis.close();
    }
    upstream.close();
    TestDatabases.drop(postgres);
    try (var files = Files.walk(dataRoot)) {
      files
          .sorted(java.util.Comparator.reverseOrder())
          .forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What a node served, from its own /metrics: requests of the route, every status. */
  static double served(ServerProcess node, String route) {
    String metrics =
        node.http().get("/metrics").bearer(TestServer.ADMIN_KEY).send().text();
    assertThat(metrics).contains("http_server_requests");
    return metrics
        .lines()
        .filter(line -> line.startsWith("http_server_requests_seconds_count")
            && line.contains("route=\"" + route + "\""))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }
}
