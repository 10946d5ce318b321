package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What callers get when the upstream fails: the spec's error types, before or inside a stream. */
class UpstreamFailureTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("seed", Map.of("REQUEST_TIMEOUT", "10"));

  private static JsonNode error(Http.Response response) {
    return response.json().get("error");
  }

  @Test
  void upstreamServerErrorsAreModelErrorsWhetherStreamedOrNot() {
    gateway.upstream.script(
        FakeUpstream.Script.error(500, "{\"error\":{\"message\":\"GPU on fire\"}}", null));
    for (String extra : List.of("", "\"stream\":true")) {
      Http.Response response =
          gateway.chat(gateway.token, GatewayFixture.body("Hi", extra)).send();
      assertThat(response.status()).as(response.text()).isEqualTo(502);
      assertThat(error(response).get("type").asText()).isEqualTo("model_error");
      assertThat(error(response).get("code").asText()).isEqualTo("upstream_error");
      assertThat(error(response).get("message").asText()).contains("GPU on fire");
    }
  }

  @Test
  void upstreamRateLimitsBecomeRateLimitErrorsWithItsRetryAfter() {
    gateway.upstream.script(FakeUpstream.Script.named("429"));
    Http.Response response =
        gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(response.status()).isEqualTo(429);
    assertThat(error(response).get("type").asText()).isEqualTo("rate_limit_error");
    assertThat(error(response).get("retry_after").asInt()).isEqualTo(7);
    assertThat(response.header("Retry-After")).isEqualTo("7");
  }

  @Test
  void upstreamRefusalsAreInvalidRequestsAndItsAuthFailuresAreTheOperators() {
    gateway.upstream.script(FakeUpstream.Script.named("400"));
    Http.Response rejected =
        gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(rejected.status()).isEqualTo(400);
    assertThat(error(rejected).get("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error(rejected).get("message").asText()).contains("bad things");

    gateway.upstream.script(
        FakeUpstream.Script.error(401, "{\"error\":{\"message\":\"bad key\"}}", null));
    Http.Response misconfigured =
        gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(misconfigured.status()).isEqualTo(502);
    assertThat(error(misconfigured).get("type").asText()).isEqualTo("server_error");
    assertThat(error(misconfigured).get("code").asText()).isEqualTo("upstream_misconfigured");
  }

  @Test
  void aStreamCutByTheUpstreamEndsWithAnErrorEventAndNoDone() {
    gateway.upstream.script(FakeUpstream.Script.named("cut"));
    Http.Response response = gateway
        .chat(gateway.token, GatewayFixture.body("Hi", "\"stream\":true"))
        .send();
    assertThat(response.status()).isEqualTo(200);
    List<String> events = GatewayFixture.events(response.text());
    assertThat(events).doesNotContain("[DONE]");
    JsonNode last = Json.read(events.getLast(), JsonNode.class);
    assertThat(last.get("error").get("type").asText()).isEqualTo("model_error");
    assertThat(last.get("error").get("code").asText()).isEqualTo("upstream_stream_cut");
    // Cut inside the body, and never said to be cut "inside a response head".
    assertThat(last.at("/error/message").asText()).doesNotContain("response head");
    assertThat(events).hasSize(3); // two pieces, then the error
    assertThat(gateway.server.engram.inference().gateway().limits().inFlight(gateway.orgId))
        .isZero();
  }

  @Test
  void aSilentUpstreamTimesOutAfterRequestTimeoutBeforeOrDuringAStream() {
    CompletableFuture<Http.Response> beforeAnswer = CompletableFuture.supplyAsync(() -> gateway
        .chat(gateway.token, GatewayFixture.body("Hi [upstream:slow]", ""))
        .send());
    gateway.upstream.script(FakeUpstream.Script.NORMAL.headerDelay(12_000));
    Http.Response plain =
        gateway.chat(gateway.token, GatewayFixture.body("Hi", "")).send();
    assertThat(beforeAnswer.join().status()).isEqualTo(200);
    assertThat(plain.status()).as(plain.text()).isEqualTo(504);
    assertThat(error(plain).get("code").asText()).isEqualTo("upstream_timeout");
    assertThat(error(plain).get("type").asText()).isEqualTo("server_error");

    gateway.upstream.script(FakeUpstream.Script.NORMAL.pieces("a", "b").interval(12_000));
    Http.Response streamed = gateway
        .chat(gateway.token, GatewayFixture.body("Hi", "\"stream\":true"))
        .send();
    List<String> events = GatewayFixture.events(streamed.text());
    assertThat(events).doesNotContain("[DONE]");
    assertThat(
            Json.read(events.getLast(), JsonNode.class).get("error").get("code").asText())
        .isEqualTo("upstream_timeout");
  }

  @Test
  void anUnreachableUpstreamIsServiceUnavailable() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    try (TestServer server = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", "http://127.0.0.1:" + closedPort + "/v1")
        .env("DEFAULT_MODEL", "m")
        .start()) {
      String org = server.createOrganization("seed");
      String token = server.token(org, null, "inference:chat");
      Http.Response response = server
          .http
          .post("/v1/chat/completions")
          .bearer(token)
          .json("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
          .send();
      assertThat(response.status()).as(response.text()).isEqualTo(503);
      assertThat(error(response).get("code").asText()).isEqualTo("upstream_unavailable");
      assertThat(error(response).get("type").asText()).isEqualTo("server_error");
    }
  }

  @Test
  void anUpstreamThatDoesNotSpeakHttpOrOpenAiIsAMalformedResponse() throws Exception {
    String[] answers = {
      "SSH-2.0-OpenSSH_9.6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\nnot json!"
    };
    for (String answer : answers) {
      try (ServerSocket upstream =
          new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
        Thread.ofVirtual().start(() -> {
          while (!upstream.isClosed()) {
            try (java.net.Socket socket = upstream.accept()) {
              socket.getInputStream().read(new byte[8192]);
              socket
                  .getOutputStream()
                  .write(answer.getBytes(java.nio.charset.StandardCharsets.UTF_8));
              socket.getOutputStream().flush();
            } catch (java.io.IOException e) {
              return;
            }
          }
        });
        try (TestServer server = TestServer.builder()
            .env("ENGRAM_UPSTREAM_URL", "http://127.0.0.1:" + upstream.getLocalPort() + "/v1")
            .env("DEFAULT_MODEL", "m")
            .start()) {
          String token = server.token(server.createOrganization("seed"), null, "inference:chat");
          Http.Response response = server
              .http
              .post("/v1/chat/completions")
              .bearer(token)
              .json(
                  "{\"model\":\"m\",\"memory\":false,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
              .send();
          assertThat(response.status()).as(answer + ": " + response.text()).isEqualTo(502);
          assertThat(error(response).get("code").asText()).isEqualTo("upstream_malformed_response");
          assertThat(error(response).get("type").asText()).isEqualTo("model_error");
        }
      }
    }
  }
}
