package io.engram.alerts;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Alerts fired by real conditions (a failing upstream, connections near the cap), resolved when
 * they clear, delivered to a webhook on loopback with a signature the receiver can check, retried
 * when the receiver fails, and visible in /metrics.
 */
class AlertsTest {
  private static FakeUpstream upstream;
  private static TestServer server;
  private static HttpServer receiver;
  private static final List<Received> received = new CopyOnWriteArrayList<>();
  private static volatile int answer = 200;

  record Received(String path, Map<String, String> headers, String body) {}

  @BeforeAll
  static void start() throws Exception {
    upstream = new FakeUpstream();
    server = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("DEFAULT_MODEL", "alert-model")
        .env("ENGRAM_ALERT_INTERVAL_SECONDS", "1")
        .env("ENGRAM_WEBHOOK_RETRY_MILLIS", "50")
        .start();
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    receiver.createContext("/", exchange -> {
      try (exchange) {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        received.add(new Received(
            exchange.getRequestURI().getPath(),
            Map.of(
                "signature",
                    String.valueOf(exchange.getRequestHeaders().getFirst("X-Engram-Signature")),
                "event", String.valueOf(exchange.getRequestHeaders().getFirst("X-Engram-Event"))),
            body));
        exchange.sendResponseHeaders(answer, -1);
      }
    });
    receiver.start();
  }

  @AfterAll
  static void stop() {
    receiver.stop(0);
    server.close();
    upstream.close();
  }

  private static String hook(String path) {
    return "http://127.0.0.1:" + receiver.getAddress().getPort() + path;
  }

  private static JsonNode createChannel(String org, String url) {
    Http.Response created = server.asOperator(server
        .http
        .post("/v1/organizations/" + org + "/alert-channels")
        .json("{\"type\":\"webhook\",\"url\":\"" + url + "\"}"));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.json();
  }

  private static JsonNode alerts(String org, String query) {
    return server
        .asOperator(server.http.get("/v1/organizations/" + org + "/alerts" + query))
        .json()
        .get("data");
  }

  private static void eventually(BooleanSupplier condition, String what) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  private static List<Received> at(String path) {
    return received.stream().filter(r -> r.path().equals(path)).toList();
  }

  @Test
  void aFailingUpstreamFiresTheErrorRateAlertAndItsWebhookIsSigned() throws Exception {
    String org = server.createOrganization("seed");
    String token = server.token(org, null, "inference:chat");
    String secret = createChannel(org, hook("/errors")).get("secret").asText();
    upstream.script(FakeUpstream.Script.error(500, "{\"error\":{\"message\":\"down\"}}", null));
    try {
      for (int i = 0; i < 25; i++) {
        Http.Response failed = server
            .http
            .post("/v1/chat/completions")
            .bearer(token)
            .json("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"memory\":false}")
            .send();
        assertThat(failed.status()).isGreaterThanOrEqualTo(500);
      }
    } finally {
      upstream.script(FakeUpstream.Script.NORMAL);
    }
    eventually(() -> alerts(org, "?state=firing&kind=error_rate").size() == 1, "error_rate fires");
    JsonNode alert = alerts(org, "?state=firing").get(0);
    assertThat(alert.get("value").asDouble()).isEqualTo(1.0);
    assertThat(alert.get("threshold").asDouble()).isEqualTo(0.01);

    eventually(() -> !at("/errors").isEmpty(), "the webhook receives alert.firing");
    Received firing = at("/errors").getFirst();
    assertThat(firing.headers().get("event")).isEqualTo("alert.firing");
    String signature = firing.headers().get("signature");
    long t = Long.parseLong(signature.substring(2, signature.indexOf(',')));
    assertThat(signature).isEqualTo(WebhookSender.signature(secret, t, firing.body()));
    assertThat(Json.read(firing.body(), JsonNode.class).at("/alert/kind").asText())
        .isEqualTo("error_rate");

    Http.Response metrics = server.asOperator(server.http.get("/metrics"));
    assertThat(metrics.text())
        .contains("engram_alert_active{kind=\"error_rate\",organization=\"" + org + "\"} 1.0");

    // Five minutes later the window holds no errors: the alert resolves, and the hook is told.
    server.clock.advance(Duration.ofMinutes(6));
    eventually(() -> alerts(org, "?state=firing").isEmpty(), "error_rate resolves");
    JsonNode resolved = alerts(org, "?state=resolved").get(0);
    assertThat(resolved.get("ended_at").isNull()).isFalse();
    // It keeps the measurement its message names, not the one read at clearing.
    assertThat(resolved.get("value").asDouble()).isEqualTo(alert.get("value").asDouble());
    eventually(
        () ->
            at("/errors").stream().anyMatch(r -> r.headers().get("event").equals("alert.resolved")),
        "the webhook receives alert.resolved");
  }

  @Test
  void connectionsNearTheirMaximumFireTheConnectionsAlert() throws Exception {
    String org = server.createOrganization("seed");
    String key = server.apiKey(org, 1000, "inference");
    Http.Response configured = server.asOperator(server
        .http
        .patch("/v1/organizations/" + org + "/config")
        .json("{\"network\":{\"max_connections\":2}}"));
    assertThat(configured.status()).isEqualTo(200);
    try (Socket first = open(key);
        Socket second = open(key)) {
      eventually(
          () -> alerts(org, "?state=firing&kind=connections").size() == 1,
          "connections fires at 2 of 2");
      assertThat(alerts(org, "?state=firing").get(0).get("message").asText())
          .contains("2 of 2 connections");
    }
    eventually(() -> alerts(org, "?state=firing").isEmpty(), "connections resolves when closed");
  }

  /**
   * An organization with an alert channel is watched with no traffic of its own at all: what the
   * operator writes into its storage fires its storage alert (the round over every organization
   * with a channel or stored data, on the node that holds the lease).
   */
  @Test
  void anOrganizationWithoutTrafficIsWatchedToo() throws Exception {
    String org = server.createOrganization("free"); // 1 GB
    createChannel(org, hook("/quiet"));
    Path weights = server.dataDir().resolve("models/.uploads/" + org + "/quiet/model.safetensors");
    Files.createDirectories(weights.getParent());
    try (RandomAccessFile file = new RandomAccessFile(weights.toFile(), "rw")) {
      file.setLength(850L << 20);
    }
    try {
      eventually(
          () -> alerts(org, "?state=firing&kind=storage").size() == 1,
          "storage fires with no request of the organization's");
    } finally {
      Files.delete(weights);
    }
  }

  /**
   * unusual_traffic: an hour of steady requests (a few every five minutes, the clock moved), then
   * a burst far above it, fires; once the burst has left the five-minute window it resolves.
   */
  @Test
  void aBurstFarAboveTheOrganizationsOwnHourIsUnusualTraffic() throws Exception {
    String org = server.createOrganization("seed");
    String key = server.apiKey(org, 100_000, "inference");
    for (int window = 0; window < 11; window++) {
      for (int i = 0; i < 4 + window % 3; i++) {
        assertThat(server.http.get("/v1/models").bearer(key).send().status()).isEqualTo(200);
      }
      server.clock.advance(Duration.ofMinutes(5));
    }
    assertThat(alerts(org, "?kind=unusual_traffic")).isEmpty();
    for (int i = 0; i < 150; i++) {
      server.http.get("/v1/models").bearer(key).send();
    }
    eventually(
        () -> alerts(org, "?state=firing&kind=unusual_traffic").size() == 1,
        "unusual_traffic fires on the burst");
    assertThat(alerts(org, "?state=firing&kind=unusual_traffic")
            .get(0)
            .get("message")
            .asText())
        .contains("requests in five minutes against a trailing mean of");
    server.clock.advance(Duration.ofMinutes(6));
    eventually(
        () -> alerts(org, "?state=firing&kind=unusual_traffic").isEmpty(),
        "unusual_traffic resolves once the burst is over");
  }

  @Test
  void storageAbove80PercentOfThePlanFiresTheStorageAlert() throws Exception {
    String org = server.createOrganization("free"); // 1 GB
    String key = server.apiKey(org, 1000, "inference");
    server.http.get("/v1/models").bearer(key).send(); // the organization is in view
    // 900 MB of model files written in the organization's storage (sparse: its size counts).
    Path weights = server.dataDir().resolve("models/.uploads/" + org + "/big/model.safetensors");
    Files.createDirectories(weights.getParent());
    try (RandomAccessFile file = new RandomAccessFile(weights.toFile(), "rw")) {
      file.setLength(900L << 20);
    }
    eventually(
        () -> alerts(org, "?state=firing&kind=storage").size() == 1, "storage fires at 88 %");
    assertThat(alerts(org, "?state=firing").get(0).get("message").asText())
        .contains("of the plan's 1 GB");
    Files.delete(weights);
    server.http.get("/v1/models").bearer(key).send();
    eventually(() -> alerts(org, "?state=firing").isEmpty(), "storage resolves");
  }

  @Test
  void aFailingReceiverIsRetriedAndEveryAttemptIsLogged() throws Exception {
    String org = server.createOrganization("seed");
    String channel = createChannel(org, hook("/flaky")).get("id").asText();
    answer = 500;
    try {
      Http.Response test = server.asOperator(
          server.http.post("/v1/organizations/" + org + "/alert-channels/" + channel + "/test"));
      assertThat(test.status()).as(test.text()).isEqualTo(200);
      assertThat(test.json().get("outcome").asText()).isEqualTo("failed");
      // A test send is one attempt, not retried: its first, and failed (not "retrying").
      assertThat(test.json().get("attempt").asInt()).isEqualTo(1);
      assertThat(test.json().get("response_status").asInt()).isEqualTo(500);

      // A real event: three attempts, the first two "retrying", the last "failed".
      String token = server.token(org, null, "inference:chat");
      upstream.script(FakeUpstream.Script.error(500, "{\"error\":{\"message\":\"down\"}}", null));
      for (int i = 0; i < 20; i++) {
        server
            .http
            .post("/v1/chat/completions")
            .bearer(token)
            .json("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"memory\":false}")
            .send();
      }
      upstream.script(FakeUpstream.Script.NORMAL);
      String deliveries = "/v1/organizations/" + org + "/alert-channels/" + channel + "/deliveries";
      eventually(
          () ->
              server.asOperator(server.http.get(deliveries)).json().get("data").size() == 4,
          "three attempts of the alert plus the test");
      JsonNode log = server.asOperator(server.http.get(deliveries)).json().get("data");
      assertThat(log.findValuesAsText("outcome"))
          .containsExactly("failed", "retrying", "retrying", "failed");
    } finally {
      answer = 200;
      upstream.script(FakeUpstream.Script.NORMAL);
    }
  }

  @Test
  void badInputIsRefusedAndAnotherOrganizationsAlertsDoNotExist() {
    String org = server.createOrganization("seed");
    String theirs = server.createOrganization("seed");
    String admin = server.apiKey(org, 1000, "admin");
    for (String url : List.of("ftp://example.com/x", "not a url", "http://user:pw@example.com/")) {
      Http.Response refused = server
          .http
          .post("/v1/organizations/" + org + "/alert-channels")
          .bearer(admin)
          .json("{\"url\":" + Json.write(url) + "}")
          .send();
      assertThat(refused.status()).as(url).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo("url");
    }
    assertThat(server
            .http
            .get("/v1/organizations/" + org + "/alerts?kind=weather")
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(400);
    assertThat(server
            .http
            .get("/v1/organizations/" + theirs + "/alerts")
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(404);
    String theirChannel = createChannel(theirs, hook("/theirs")).get("id").asText();
    assertThat(server
            .http
            .delete("/v1/organizations/" + org + "/alert-channels/" + theirChannel)
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(404);
    // Listed without the secret.
    assertThat(server
            .http
            .get("/v1/organizations/" + org + "/alert-channels")
            .bearer(admin)
            .send()
            .text())
        .doesNotContain("whsec_");
  }

  private static Socket open(String key) throws Exception {
    Socket socket = new Socket("127.0.0.1", server.engram.port());
    socket.setSoTimeout(10_000);
    OutputStream out = socket.getOutputStream();
    out.write(("GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n\r\n")
        .getBytes(StandardCharsets.UTF_8));
    out.flush();
    byte[] head = new byte[12];
    socket.getInputStream().readNBytes(head, 0, 12);
    assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
    return socket;
  }
}
