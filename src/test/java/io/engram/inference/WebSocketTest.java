package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.WebSocketClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Both WebSocket protocols: /ws (typed messages) and /v1/chat/stream (OpenAI chunks as frames). */
class WebSocketTest {
  @RegisterExtension
  static final GatewayFixture gateway = new GatewayFixture(
      "seed",
      Map.of("ENGRAM_WEBSOCKET_AUTH_TIMEOUT", "1", "ENGRAM_WEBSOCKET_MAX_CONNECTIONS", "3"));

  /** A client of the test's server. */
  private static WebSocketClient client(String path, String authorization) {
    return new WebSocketClient(gateway.server.engram.port(), path, authorization);
  }

  private static String inference(String content, String extra) {
    return "{\"type\":\"inference\",\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":"
        + Json.write(content) + "}]" + (extra.isEmpty() ? "" : "," + extra) + "}";
  }

  @Test
  void theTypedProtocolIsServedUnderV1Too() throws Exception {
    try (WebSocketClient client = client("/v1/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.token + "\"}");
      assertThat(client.next().get("type").asText()).isEqualTo("auth_ok");
      client.send(inference("Hi", "\"stream\":false,\"memory\":false"));
      List<JsonNode> frames = client.until(f -> f.path("type").asText().equals("done"));
      assertThat(frames).hasSize(2);
      assertThat(frames.getFirst().get("content").asText()).isEqualTo("Hello from the upstream.");
    }
  }

  @Test
  void wsAuthenticatesThenStreamsTokensAndADoneWithUsageAndMemories() throws Exception {
    String id = gateway.remember("The office wifi password is on the fridge.", null);
    try (WebSocketClient client = client("/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + gateway.token + "\"}");
      assertThat(client.next().get("type").asText()).isEqualTo("auth_ok");
      client.send(inference("Where is the wifi password?", "\"stream\":true"));
      List<JsonNode> frames = client.until(f -> f.path("type").asText().equals("done"));
      List<JsonNode> tokens = frames.subList(0, frames.size() - 1);
      assertThat(tokens).allSatisfy(f -> assertThat(f.get("type").asText()).isEqualTo("token"));
      assertThat(tokens.stream().map(f -> f.get("content").asText()).collect(Collectors.joining()))
          .isEqualTo("Hello from the upstream.");
      JsonNode done = frames.getLast();
      assertThat(done.get("finish_reason").asText()).isEqualTo("stop");
      assertThat(done.get("usage").get("completion_tokens").asInt()).isEqualTo(5);
      assertThat(done.get("memory_ids").toString()).contains(id);
      assertThat(gateway
              .upstream
              .lastRequest()
              .get("messages")
              .get(0)
              .get("content")
              .asText())
          .contains("fridge");

      // The connection stays usable: a bad request is an error frame, then another inference works.
      client.send("{\"type\":\"inference\",\"model\":\"engram-chat\"}");
      JsonNode error = client.next();
      assertThat(error.get("type").asText()).isEqualTo("error");
      assertThat(error.get("error").get("type").asText()).isEqualTo("invalid_request_error");
      assertThat(error.get("error").get("param").asText()).isEqualTo("messages");
      client.send(inference("Hi", "\"agent\":5"));
      assertThat(client.next().get("error").get("param").asText()).isEqualTo("agent");
      client.send(inference("Hi\u0000there", ""));
      assertThat(client.next().get("error").get("type").asText())
          .isEqualTo("invalid_request_error");
      client.send(inference("Again", ""));
      List<JsonNode> again = client.until(f -> f.path("type").asText().equals("done"));
      assertThat(again).hasSize(2); // one token frame with the whole reply, then done
    }
  }

  @Test
  void wsClosesAConnectionThatDoesNotAuthenticateInTime() throws Exception {
    try (WebSocketClient client = client("/ws", null)) {
      JsonNode error = client.next();
      assertThat(error.get("type").asText()).isEqualTo("error");
      assertThat(error.get("error").get("code").asText()).isEqualTo("auth_timeout");
      assertThat(client.closed.get(5, TimeUnit.SECONDS)).isEqualTo(ChatSockets.POLICY_VIOLATION);
    }
  }

  @Test
  void wsRefusesABadKeyOrAMessageBeforeAuthAndCloses() throws Exception {
    try (WebSocketClient client = client("/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"engk_wrong-0000000000000000000000\"}");
      assertThat(client.next().get("error").get("type").asText()).isEqualTo("authentication_error");
      assertThat(client.closed.get(5, TimeUnit.SECONDS)).isEqualTo(ChatSockets.POLICY_VIOLATION);
    }
    try (WebSocketClient client = client("/ws", null)) {
      client.send(inference("Hi", ""));
      assertThat(client.next().get("error").get("code").asText()).isEqualTo("missing_api_key");
      assertThat(client.closed.get(5, TimeUnit.SECONDS)).isEqualTo(ChatSockets.POLICY_VIOLATION);
    }
    String memoryOnly = gateway.server.token(gateway.orgId, null, "memory:read");
    try (WebSocketClient client = client("/ws", null)) {
      client.send("{\"type\":\"auth\",\"api_key\":\"" + memoryOnly + "\"}");
      assertThat(client.next().get("error").get("type").asText()).isEqualTo("authorization_error");
    }
  }

  @Test
  void chatStreamTakesTheHeaderAndAnswersWithOpenAiChunksThenDone() throws Exception {
    try (WebSocketClient client = client("/v1/chat/stream", gateway.key)) {
      client.send(
          "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":true,"
              + "\"stream_options\":{\"include_usage\":true}}");
      List<JsonNode> frames = client.until(f -> f.isTextual() && f.asText().equals("[DONE]"));
      List<JsonNode> chunks = frames.subList(0, frames.size() - 1);
      assertThat(chunks)
          .allSatisfy(c -> assertThat(c.get("object").asText()).isEqualTo("chat.completion.chunk"));
      assertThat(
              chunks.getFirst().get("choices").get(0).get("delta").get("role").asText())
          .isEqualTo("assistant");
      assertThat(chunks.getLast().get("choices")).isEmpty();
      assertThat(chunks.getLast().get("usage").get("completion_tokens").asInt()).isEqualTo(5);

      client.send(
          "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
      JsonNode whole = client.next();
      assertThat(whole.get("object").asText()).isEqualTo("chat.completion");
      assertThat(whole.get("choices").get(0).get("message").get("content").asText())
          .isEqualTo("Hello from the upstream.");

      client.send("{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
      assertThat(client.next().get("error").get("code").asText()).isEqualTo("model_not_found");
    }
  }

  @Test
  void connectionsBeyondTheCapAreRefusedAndClosingOneStopsItsGeneration() throws Exception {
    gateway.upstream.script(
        FakeUpstream.Script.NORMAL.pieces(StreamingTest.words(500)).interval(20));
    List<WebSocketClient> clients = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        clients.add(client("/v1/chat/stream", gateway.key));
      }
      try (WebSocketClient extra = client("/v1/chat/stream", gateway.key)) {
        assertThat(extra.next().get("error").get("code").asText())
            .isEqualTo("too_many_connections");
        assertThat(extra.closed.get(5, TimeUnit.SECONDS)).isEqualTo(ChatSockets.TRY_AGAIN_LATER);
      }
      int abandoned = gateway.upstream.streamsAbandoned();
      WebSocketClient first = clients.getFirst();
      first.send(
          "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"Go\"}],\"stream\":true}");
      first.next();
      first.socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
      StreamingTest.awaitUntil(() -> gateway.upstream.streamsAbandoned() > abandoned
          && gateway.server.engram.inference().gateway().limits().inFlight(gateway.orgId) == 0);
    } finally {
      clients.forEach(WebSocketClient::close);
    }
  }

  @Test
  void idleConnectionsAreClosed() throws Exception {
    try (GatewayFixture idle =
        new GatewayFixture("seed", Map.of("ENGRAM_WEBSOCKET_IDLE_TIMEOUT", "5"))) {
      HttpClient http = HttpClient.newHttpClient();
      CompletableFuture<Integer> closed = new CompletableFuture<>();
      WebSocket socket = http.newWebSocketBuilder()
          .header("Authorization", "Bearer " + idle.key)
          .buildAsync(
              URI.create("ws://127.0.0.1:" + idle.server.engram.port() + "/v1/chat/stream"),
              new WebSocket.Listener() {
                @Override
                public CompletionStage<?> onClose(
                    WebSocket webSocket, int statusCode, String reason) {
                  closed.complete(statusCode);
                  return null;
                }

                @Override
                public CompletionStage<?> onText(
                    WebSocket webSocket, CharSequence data, boolean last) {
                  webSocket.request(1);
                  return null;
                }
              })
          .join();
      assertThat(closed.get(12, TimeUnit.SECONDS)).isNotEqualTo(WebSocket.NORMAL_CLOSURE);
      socket.abort();
    }
  }
}
