package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SSE exactly as OpenAI's clients read it, keep-alives, slow clients and clients that leave. */
class StreamingTest {
  @RegisterExtension
  static final GatewayFixture gateway =
      new GatewayFixture("seed", Map.of("ENGRAM_STREAM_KEEPALIVE_SECONDS", "1"));

  @Test
  void streamsChunksWithOneIdTheRoleFirstOneFinishReasonThenUsageThenDone() {
    Http.Response response = gateway
        .chat(
            gateway.token,
            GatewayFixture.body(
                "Say hello", "\"stream\":true,\"stream_options\":{\"include_usage\":true}"))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    assertThat(response.header("Content-Type")).startsWith("text/event-stream");
    assertThat(response.header("Content-Length")).isNull();
    assertThat(response.header("Cache-Control")).isEqualTo("no-cache");

    List<String> events = GatewayFixture.events(response.text());
    assertThat(events.getLast()).isEqualTo("[DONE]");
    List<JsonNode> chunks = GatewayFixture.chunks(response.text());
    JsonNode first = chunks.getFirst();
    for (JsonNode chunk : chunks) {
      assertThat(chunk.get("id").asText())
          .isEqualTo(first.get("id").asText())
          .startsWith("chatcmpl-");
      assertThat(chunk.get("created").asLong()).isEqualTo(first.get("created").asLong());
      assertThat(chunk.get("model").asText()).isEqualTo(GatewayFixture.MODEL);
      assertThat(chunk.get("object").asText()).isEqualTo("chat.completion.chunk");
    }
    assertThat(first.get("choices").get(0).get("delta").get("role").asText())
        .isEqualTo("assistant");
    List<JsonNode> withChoices =
        chunks.stream().filter(c -> !c.get("choices").isEmpty()).toList();
    JsonNode last = withChoices.getLast();
    assertThat(last.get("choices").get(0).get("finish_reason").asText()).isEqualTo("stop");
    assertThat(last.get("choices").get(0).get("delta").isEmpty()).isTrue();
    withChoices.subList(0, withChoices.size() - 1).forEach(chunk -> {
      assertThat(chunk.get("choices").get(0).get("finish_reason").isNull()).isTrue();
      assertThat(chunk.get("usage").isNull()).isTrue();
    });
    String text = withChoices.stream()
        .map(c -> c.get("choices").get(0).path("delta").path("content").asText(""))
        .collect(Collectors.joining());
    assertThat(text).isEqualTo("Hello from the upstream.");
    JsonNode usageChunk = chunks.getLast();
    assertThat(usageChunk.get("choices")).isEmpty();
    assertThat(usageChunk.get("usage").get("completion_tokens").asInt()).isEqualTo(5);
    assertThat(usageChunk.get("usage").get("total_tokens").asInt())
        .isEqualTo(usageChunk.get("usage").get("prompt_tokens").asInt() + 5);
    assertThat(gateway.upstream.lastRequest().get("stream").asBoolean()).isTrue();
  }

  @Test
  void withoutIncludeUsageThereIsNoUsageChunk() {
    Http.Response response = gateway
        .chat(gateway.token, GatewayFixture.body("Say hello", "\"stream\":true"))
        .send();
    List<JsonNode> chunks = GatewayFixture.chunks(response.text());
    assertThat(chunks).allSatisfy(chunk -> {
      assertThat(chunk.has("usage")).isFalse();
      assertThat(chunk.get("choices")).hasSize(1);
    });
    assertThat(GatewayFixture.events(response.text()).getLast()).isEqualTo("[DONE]");
  }

  @Test
  void textCompletionsStreamToo() {
    Http.Response response = gateway
        .server
        .http
        .post("/v1/completions")
        .bearer(gateway.key)
        .json("{\"model\":\"engram-chat\",\"prompt\":\"Once\",\"stream\":true}")
        .send();
    List<JsonNode> chunks = GatewayFixture.chunks(response.text());
    assertThat(chunks)
        .allSatisfy(c -> assertThat(c.get("object").asText()).isEqualTo("text_completion"));
    assertThat(chunks.stream()
            .map(c -> c.get("choices").get(0).get("text").asText())
            .collect(Collectors.joining()))
        .isEqualTo("Hello from the upstream.");
    assertThat(chunks.getLast().get("choices").get(0).get("finish_reason").asText())
        .isEqualTo("stop");
  }

  @Test
  void longSilencesGetKeepAliveComments() {
    gateway.upstream.script(FakeUpstream.Script.NORMAL.pieces("slow", " answer").interval(2_500));
    Http.Response response = gateway
        .chat(gateway.token, GatewayFixture.body("Think hard", "\"stream\":true"))
        .send();
    assertThat(response.text()).contains(": keep-alive\n\n");
    assertThat(GatewayFixture.events(response.text()).getLast()).isEqualTo("[DONE]");
  }

  @Test
  void aClientThatLeavesCancelsTheUpstreamRequest() throws Exception {
    gateway.upstream.script(FakeUpstream.Script.NORMAL.pieces(words(500)).interval(20));
    int abandoned = gateway.upstream.streamsAbandoned();
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<InputStream> response = client.send(
        HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + gateway.server.engram.port() + "/v1/chat/completions"))
            .header("Authorization", "Bearer " + gateway.token)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(
                GatewayFixture.body("Go on", "\"stream\":true")))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream body = response.body()) {
      byte[] some = body.readNBytes(300);
      assertThat(new String(some, StandardCharsets.UTF_8)).startsWith("data: ");
    }
    client.close();
    awaitUntil(() -> gateway.upstream.streamsAbandoned() > abandoned
        && gateway.upstream.inFlight() == 0
        && gateway.server.engram.inference().gateway().limits().inFlight(gateway.orgId) == 0);
  }

  @Test
  void aSlowReaderGetsEveryPieceInOrder() throws Exception {
    String[] pieces = IntStream.range(0, 400)
        .mapToObj(i -> " piece-" + i + "-" + "x".repeat(1_000))
        .toArray(String[]::new);
    gateway.upstream.script(FakeUpstream.Script.NORMAL.pieces(pieces));
    String raw;
    try (Socket socket = new Socket("127.0.0.1", gateway.server.engram.port())) {
      String body = GatewayFixture.body("Long one", "\"stream\":true");
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
              + gateway.token
              + "\r\nContent-Type: application/json\r\nContent-Length: "
              + body.getBytes(StandardCharsets.UTF_8).length
              + "\r\nConnection: close\r\n\r\n" + body)
          .getBytes(StandardCharsets.UTF_8));
      out.flush();
      socket.setReceiveBufferSize(4096);
      InputStream in = socket.getInputStream();
      StringBuilder received = new StringBuilder();
      byte[] buffer = new byte[4096];
      int read;
      while ((read = in.read(buffer)) > 0) {
        received.append(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
        Thread.sleep(2); // a reader much slower than the upstream
      }
      raw = received.toString();
    }
    assertThat(raw).startsWith("HTTP/1.1 200");
    int last = -1;
    for (int i = 0; i < pieces.length; i++) {
      int at = raw.indexOf("piece-" + i + "-", last + 1);
      assertThat(at).as("piece %d in order", i).isGreaterThan(last);
      last = at;
    }
    assertThat(raw).contains("data: [DONE]");
  }

  static String[] words(int count) {
    return IntStream.range(0, count).mapToObj(i -> " w" + i).toArray(String[]::new);
  }

  static void awaitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }
}
