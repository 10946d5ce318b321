package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.WebSocketClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every field of PATCH /config changes what the server does, at once, without a restart: proved
 * through real HTTP connections and WebSockets.
 */
class OrganizationConfigEnforcementTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture("seed", Map.of());

  private static Http.Response configure(String json) {
    return configure(gateway.orgId, json);
  }

  private static Http.Response configure(String orgId, String json) {
    Http.Response response = gateway.server.asOperator(
        gateway.server.http.patch("/v1/organizations/" + orgId + "/config").json(json));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response;
  }

  /**
   * An organization of its own, for the connection tests: its only connections are the test's
   * sockets (the shared client's pooled connections would count against the fixture's).
   */
  private record Org(String id, String key) {}

  private static Org fresh() {
    String id = gateway.server.createOrganization("seed");
    return new Org(id, gateway.server.apiKey(id, 1000, "inference"));
  }

  @Test
  void tokensPerRequestIsRefusedBeforeAnyWork() {
    int before = gateway.upstream.requests().size();
    configure("{\"quotas\":{\"max_tokens_per_request\":100}}");
    try {
      Http.Response refused = gateway
          .chat(gateway.token, GatewayFixture.body("hi", "\"max_tokens\":101"))
          .send();
      assertThat(refused.status()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo("max_tokens");
      assertThat(refused.json().at("/error/message").asText())
          .contains("quotas.max_tokens_per_request");
      assertThat(gateway.upstream.requests()).hasSize(before);
      // Left out, max_tokens is filled in within the organization's ceiling.
      assertThat(
              gateway.chat(gateway.token, GatewayFixture.body("hi", "")).send().status())
          .isEqualTo(200);
      assertThat(gateway.upstream.lastRequest().get("max_tokens").asInt()).isEqualTo(100);
    } finally {
      configure("{\"quotas\":null}");
    }
    assertThat(gateway
            .chat(gateway.token, GatewayFixture.body("hi", "\"max_tokens\":101"))
            .send()
            .status())
        .isEqualTo(200);
  }

  /**
   * Above quotas.max_tokens_per_request, /v1/messages lowers max_tokens by default (Anthropic's
   * clients must send one: the AI SDK sends 4,096), the OpenAI-style routes refuse; each way is an
   * organization's switch, and a lowered request says so in X-Engram-Max-Tokens-Clamped.
   */
  @Test
  void aMaxTokensAboveTheQuotaIsLoweredWhereTheOrganizationSaysElseRefused() {
    String message = "{\"model\":\"" + GatewayFixture.MODEL + "\",\"max_tokens\":4096,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    configure("{\"quotas\":{\"max_tokens_per_request\":1024}}");
    try {
      Http.Response lowered = messages(message);
      assertThat(lowered.status()).as(lowered.text()).isEqualTo(200);
      assertThat(lowered.header("X-Engram-Max-Tokens-Clamped")).isEqualTo("from=4096; to=1024");
      assertThat(gateway.upstream.lastRequest().get("max_tokens").asInt()).isEqualTo(1024);

      String chat = GatewayFixture.body("hi", "\"max_completion_tokens\":4096");
      Http.Response refused = gateway.chat(gateway.token, chat).send();
      assertThat(refused.status()).isEqualTo(400);
      assertThat(refused.header("X-Engram-Max-Tokens-Clamped")).isNull();

      configure("{\"quotas\":{\"clamp_max_tokens\":true,\"clamp_messages_max_tokens\":false}}");
      Http.Response chatLowered = gateway.chat(gateway.token, chat).send();
      assertThat(chatLowered.status()).as(chatLowered.text()).isEqualTo(200);
      assertThat(chatLowered.header("X-Engram-Max-Tokens-Clamped")).isEqualTo("from=4096; to=1024");
      assertThat(gateway.upstream.lastRequest().get("max_completion_tokens").asInt())
          .isEqualTo(1024);
      Http.Response messageRefused = messages(message);
      assertThat(messageRefused.status()).isEqualTo(400);
      assertThat(messageRefused.json().at("/error/param").asText()).isEqualTo("max_tokens");
    } finally {
      configure("{\"quotas\":null}");
    }
  }

  private static Http.Response messages(String json) {
    return gateway
        .server
        .http
        .post("/v1/messages")
        .bearer(gateway.key)
        .json(json)
        .send();
  }

  @Test
  void concurrentRequestsFollowTheOrganizationsSetting() throws Exception {
    configure("{\"quotas\":{\"max_concurrent_requests\":1}}");
    try {
      gateway.upstream.script(FakeUpstream.Script.NORMAL.interval(300));
      CompletableFuture<Http.Response> first = CompletableFuture.supplyAsync(
          () -> gateway.chat(gateway.token, GatewayFixture.body("a", "")).send());
      StreamingTest.awaitUntil(() -> gateway.upstream.inFlight() == 1);
      Http.Response second =
          gateway.chat(gateway.key, GatewayFixture.body("b", "")).send();
      assertThat(second.status()).isEqualTo(429);
      assertThat(second.json().at("/error/code").asText()).isEqualTo("concurrency_limit_exceeded");
      assertThat(second.json().at("/error/retry_after").asInt()).isEqualTo(1);
      JsonNode config = gateway
          .server
          .asOperator(gateway.server.http.get("/v1/organizations/" + gateway.orgId + "/config"))
          .json();
      assertThat(config.at("/in_use/inference_requests").asInt()).isEqualTo(1);
      assertThat(first.join().status()).isEqualTo(200);
    } finally {
      configure("{\"quotas\":null}");
    }
  }

  @Test
  void theAllowlistRefusesOtherAddressesButNeverLocksTheOperatorOut() {
    configure("{\"network\":{\"allowed_ips\":[\"203.0.113.0/24\"]}}");
    try {
      Http.Response refused =
          gateway.chat(gateway.token, GatewayFixture.body("hi", "")).send();
      assertThat(refused.status()).isEqualTo(403);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("ip_not_allowed");
      assertThat(refused.json().at("/error/message").asText()).contains("127.0.0.1");
      Http.Response memory =
          gateway.server.http.get("/v1/memory/events").bearer(gateway.token).send();
      assertThat(memory.status()).isEqualTo(403);
      configure("{\"network\":{\"allowed_ips\":[\"203.0.113.0/24\",\"127.0.0.0/8\"]}}");
      assertThat(
              gateway.chat(gateway.token, GatewayFixture.body("hi", "")).send().status())
          .isEqualTo(200);
    } finally {
      configure("{\"network\":null}");
    }
  }

  @Test
  void openConnectionsAreCappedPerOrganizationAndFreedWhenOneCloses() throws Exception {
    Org org = fresh();
    configure(org.id(), "{\"network\":{\"max_connections\":2}}");
    try (Socket first = connect();
        Socket second = connect()) {
      assertThat(statusOf(exchange(first, org.key()))).isEqualTo(200);
      assertThat(statusOf(exchange(second, org.key()))).isEqualTo(200);
      // A second request on an open connection is not a new connection.
      assertThat(statusOf(exchange(first, org.key()))).isEqualTo(200);
      try (Socket third = connect()) {
        String refused = exchange(third, org.key());
        assertThat(statusOf(refused)).isEqualTo(429);
        assertThat(refused)
            .contains("connection_limit_exceeded")
            .containsIgnoringCase("Connection: close");
      }
      assertThat(openConnections(org.id())).isEqualTo(2);
      first.close();
      StreamingTest.awaitUntil(() -> openConnections(org.id()) == 1);
      try (Socket fourth = connect()) {
        assertThat(statusOf(exchange(fourth, org.key()))).isEqualTo(200);
      }
    }
  }

  @Test
  void keepAliveTimeoutClosesAnIdleConnectionOfTheOrganization() throws Exception {
    Org org = fresh();
    configure(org.id(), "{\"network\":{\"keepalive_timeout\":1}}");
    try (Socket socket = connect()) {
      assertThat(statusOf(exchange(socket, org.key()))).isEqualTo(200);
      long start = System.nanoTime();
      socket.setSoTimeout(10_000);
      assertThat(socket.getInputStream().read()).as("closed by the server").isEqualTo(-1);
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isBetween(Duration.ofMillis(700), Duration.ofSeconds(5));
    }
    configure(org.id(), "{\"network\":null}");
    // Without the setting, the system's 30 seconds apply: still open after 2.
    try (Socket socket = connect()) {
      assertThat(statusOf(exchange(socket, org.key()))).isEqualTo(200);
      socket.setSoTimeout(2_000);
      try {
        int read = socket.getInputStream().read();
        assertThat(read).as("nothing to read, not closed").isNotEqualTo(-1);
      } catch (SocketTimeoutException stillOpen) {
        // expected
      }
    }
  }

  @Test
  void connectionTimeoutCutsARequestWhoseBodyStalls() throws Exception {
    configure("{\"network\":{\"connection_timeout\":3}}");
    try (Socket socket = connect()) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
              + gateway.key + "\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
              + "{\"model\":")
          .getBytes(StandardCharsets.UTF_8));
      out.flush();
      long start = System.nanoTime();
      socket.setSoTimeout(15_000);
      InputStream in = socket.getInputStream();
      byte[] answer = in.readAllBytes(); // until the server closes
      Duration waited = Duration.ofNanos(System.nanoTime() - start);
      // Cut at the timeout, within a second (it was twice the value: 4 s set to 2, 12 s to 6).
      assertThat(waited)
          .as(answer.length + " bytes")
          .isBetween(Duration.ofMillis(2_500), Duration.ofMillis(4_000));
      String text = new String(answer, StandardCharsets.UTF_8);
      assertThat(text).doesNotContain("\"choices\"");
      assertThat(text).startsWith("HTTP/1.1 408").contains("request_timeout");
    } finally {
      configure("{\"network\":null}");
    }
  }

  @Test
  void webSocketsCanBeTurnedOffCappedAndTimedOutPerOrganization() throws Exception {
    int port = gateway.server.engram.port();
    configure("{\"websocket\":{\"enabled\":false}}");
    try (WebSocketClient off = new WebSocketClient(port, "/ws", null)) {
      off.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.key + "\"}");
      assertThat(off.next().at("/error/code").asText()).isEqualTo("websocket_disabled");
      assertThat(off.closed.get()).isEqualTo(ChatSockets.POLICY_VIOLATION);
    }
    configure("{\"websocket\":{\"enabled\":null,\"max_connections\":1,\"idle_timeout\":1}}");
    try (WebSocketClient first = new WebSocketClient(port, "/ws", null);
        WebSocketClient second = new WebSocketClient(port, "/ws", null)) {
      first.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.key + "\"}");
      assertThat(first.next().get("type").asText()).isEqualTo("auth_ok");
      second.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.token + "\"}");
      assertThat(second.next().at("/error/code").asText()).isEqualTo("too_many_connections");
      assertThat(second.closed.get()).isEqualTo(ChatSockets.TRY_AGAIN_LATER);
      // The organization's idle timeout: a silent connection is closed after about a second.
      long start = System.nanoTime();
      first.closed.get();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    } finally {
      configure("{\"websocket\":null}");
    }
  }

  private static int openConnections(String orgId) {
    return gateway
        .server
        .asOperator(gateway.server.http.get("/v1/organizations/" + orgId + "/config"))
        .json()
        .at("/in_use/connections")
        .asInt();
  }

  private static Socket connect() throws Exception {
    Socket socket = new Socket("127.0.0.1", gateway.server.engram.port());
    socket.setSoTimeout(10_000);
    return socket;
  }

  /** One keep-alive request for the models list with the credential; the whole answer. */
  private static String exchange(Socket socket, String credential) throws Exception {
    OutputStream out = socket.getOutputStream();
    out.write(
        ("GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + credential + "\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8));
    out.flush();
    InputStream in = socket.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    int length = 0;
    for (String line : List.of(head.toString().split("\r\n"))) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  private static int statusOf(String response) {
    return Integer.parseInt(response.substring(9, 12));
  }
}
