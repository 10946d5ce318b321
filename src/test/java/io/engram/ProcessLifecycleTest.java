package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.BesideTheRest;
import io.engram.support.Http;
import io.engram.support.ServerProcess;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What only a real process shows: start-up refusal, JSON logs, kill -9 durability, graceful stop. */
@BesideTheRest
class ProcessLifecycleTest {

  @TempDir
  Path dataDir;

  private Map<String, String> env(String... pairs) {
    Map<String, String> env = new java.util.HashMap<>(Map.of(
        "ENGRAM_DATA_DIR", dataDir.toString(),
        "ENGRAM_ADMIN_KEY", TestServer.ADMIN_KEY,
        "LOG_FILE_PATH", dataDir.resolve("app.log").toString()));
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void badVariablesStopStartUpNamingEachVariableAndItsRange() {
    try (ServerProcess server =
        ServerProcess.start(env("REQUEST_TIMEOUT", "5", "LOG_FORMAT", "xml"), "serve")) {
      assertThat(server.awaitExit(Duration.ofSeconds(30))).isEqualTo(2);
      assertThat(server.stderr())
          .contains("REQUEST_TIMEOUT must be between 10 and 600, got '5'")
          .contains("LOG_FORMAT must be one of json, text, structured, got 'xml'");
    }
  }

  /**
   * A second server on the same data directory, or the same port, stops at once with one plain
   * sentence naming the process that has it (no JSON log line about a locked index).
   */
  @Test
  void aSecondServerOnTheSameDataOrPortStopsSayingWhichProcessHasIt(@TempDir Path other) {
    try (ServerProcess first =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      long pid = first.process().pid();
      try (ServerProcess sameData = ServerProcess.start(env(), "serve")) {
        assertThat(sameData.awaitExit(Duration.ofSeconds(30))).isEqualTo(1);
        assertThat(said(sameData))
            .containsExactly("Engram cannot start: the data directory "
                + dataDir.toAbsolutePath().normalize() + " is in use by process " + pid
                + " (another Engram server). Stop that one, or use it.");
        assertThat(sameData.stdout()).isEmpty();
      }
      Map<String, String> elsewhere = env("ENGRAM_DATA_DIR", other.toString());
      elsewhere.put("API_PORT", String.valueOf(first.port));
      try (ServerProcess samePort = ServerProcess.start(elsewhere, "serve")) {
        assertThat(samePort.awaitExit(Duration.ofSeconds(30))).isEqualTo(1);
        assertThat(said(samePort))
            .containsExactly("Engram cannot start: port " + first.port + " is in use by process "
                + pid + ". Stop it, or set API_PORT to another port.");
      }
      // The first one still serves.
      assertThat(first.http().get("/v1/health").send().status()).isEqualTo(200);
    }
  }

  /**
   * With a TLS port and no certificate configured, the first start generates a self-signed one
   * for local use and prints its SHA-256 fingerprint on the console, as a client pins it.
   */
  @Test
  void aGeneratedTlsCertificatesFingerprintIsPrinted() throws Exception {
    int tlsPort = ServerProcess.freePort();
    try (ServerProcess server = ServerProcess.start(
            env("API_TLS_PORT", String.valueOf(tlsPort)), "serve")
        .awaitHealthy(Duration.ofSeconds(60))) {
      byte[] der = java.security.cert.CertificateFactory.getInstance("X.509")
          .generateCertificate(Files.newInputStream(dataDir.resolve("tls/server.crt")))
          .getEncoded();
      String fingerprint = java.util.HexFormat.ofDelimiter(":")
          .withUpperCase()
          .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(der));
      assertThat(server.stderr()).contains("SHA-256 fingerprint: " + fingerprint);
    }
  }

  /** What a process printed on stderr, but the JVM's note on the incubating Vector API. */
  private static java.util.List<String> said(ServerProcess process) {
    return process
        .stderr()
        .lines()
        .filter(line -> !line.startsWith("WARNING: Using incubator modules"))
        .toList();
  }

  @Test
  void aPortOutsideTheRangeStopsStartUp() {
    try (ServerProcess server = ServerProcess.start(env("API_PORT", "80"), "serve")) {
      assertThat(server.awaitExit(Duration.ofSeconds(30))).isEqualTo(2);
      assertThat(server.stderr()).contains("API_PORT must be between 1024 and 65535, got '80'");
    }
  }

  @Test
  void logsAreJsonLinesAndShutdownIsGraceful() {
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      server.http().get("/v1/health").header("X-Request-Id", "trace-42").send();
      assertThat(server.terminate()).isIn(0, 143);
      List<String> lines = server.stdout().lines().toList();
      assertThat(lines)
          .isNotEmpty()
          .allSatisfy(
              line -> assertThat(Json.read(line, JsonNode.class).has("message")).isTrue());
      assertThat(lines).anySatisfy(line -> assertThat(line).contains("Engram listening on"));
      assertThat(lines)
          .anySatisfy(line -> assertThat(line)
              .contains("\"request_id\":\"trace-42\"")
              .contains("\"route\":\"/v1/health\""));
      assertThat(lines).anySatisfy(line -> assertThat(line).contains("shutdown complete"));
      assertThat(server.stdout() + server.stderr()).doesNotContain(TestServer.ADMIN_KEY);
    }
  }

  @Test
  void theFirstStartPrintsAnAccountKeyOnceAndNeverLogsIt() {
    Map<String, String> env = env();
    env.remove("ENGRAM_ADMIN_KEY");
    String key;
    try (ServerProcess first =
        ServerProcess.start(env, "serve").awaitHealthy(Duration.ofSeconds(60))) {
      key = first
          .stderr()
          .lines()
          .map(String::trim)
          .filter(l -> l.startsWith("enga_"))
          .findFirst()
          .orElseThrow();
      assertThat(first.stdout()).doesNotContain(key);
      assertThat(first
              .http()
              .post("/v1/organizations")
              .bearer(key)
              .json("{\"name\":\"Boot\"}")
              .send()
              .status())
          .isEqualTo(201);
      first.terminate();
    }
    try (ServerProcess second =
        ServerProcess.start(env, "serve").awaitHealthy(Duration.ofSeconds(60))) {
      assertThat(second.stderr()).doesNotContain("enga_");
      assertThat(second.http().get("/v1/organizations").bearer(key).send().status())
          .isEqualTo(200);
    }
  }

  @Test
  void everyAcknowledgedWriteSurvivesKillDashNine() throws Exception {
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    String org;
    try (ServerProcess server =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      Http http = server.http();
      org = http.post("/v1/organizations")
          .bearer(TestServer.ADMIN_KEY)
          .json("{\"name\":\"Durable\",\"plan\":\"seed\"}")
          .send()
          .json()
          .get("id")
          .asText();
      acknowledged.add(org);
      AtomicBoolean stop = new AtomicBoolean();
      try (ExecutorService writers = Executors.newVirtualThreadPerTaskExecutor()) {
        for (int w = 0; w < 4; w++) {
          writers.submit(() -> {
            while (!stop.get()) {
              try {
                Http.Response response = http.post("/v1/organizations/" + org + "/tokens")
                    .bearer(TestServer.ADMIN_KEY)
                    .json("{\"name\":\"t\",\"scopes\":[\"memory:write\"]}")
                    .send();
                if (response.status() == 201) {
                  acknowledged.add(response.json().get("id").asText());
                }
              } catch (RuntimeException connectionLost) {
                return;
              }
            }
          });
        }
        while (acknowledged.size() < 150) {
          Thread.sleep(20);
        }
        server.kill9();
        stop.set(true);
      }
    }
    assertThat(acknowledged).hasSizeGreaterThanOrEqualTo(150);
    try (ServerProcess restarted =
        ServerProcess.start(env(), "serve").awaitHealthy(Duration.ofSeconds(60))) {
      JsonNode tokens = restarted
          .http()
          .get("/v1/organizations/" + org + "/tokens")
          .bearer(TestServer.ADMIN_KEY)
          .send()
          .json()
          .get("data");
      Set<String> stored = new java.util.HashSet<>(tokens.findValuesAsText("id"));
      stored.add(org);
      assertThat(stored).containsAll(acknowledged);
    }
  }

  @Test
  void adminCommandsPrintJsonOnStdoutOnly() throws IOException {
    try (ServerProcess cli = ServerProcess.start(
        env(), "admin", "org", "create", "--name", "From CLI", "--plan", "rise", "--json")) {
      assertThat(cli.awaitExit(Duration.ofSeconds(60))).as(cli.stderr()).isZero();
      JsonNode org = Json.read(cli.stdout().trim(), JsonNode.class);
      assertThat(org.get("plan").asText()).isEqualTo("rise");
      assertThat(Files.exists(dataDir.resolve("engram.db"))).isTrue();
    }
  }
}
