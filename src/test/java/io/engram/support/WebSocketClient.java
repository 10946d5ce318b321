package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A WebSocket client that queues what it receives. */
public final class WebSocketClient implements WebSocket.Listener, AutoCloseable {
  public final BlockingQueue<String> frames = new LinkedBlockingQueue<>();
  public final CompletableFuture<Integer> closed = new CompletableFuture<>();
  public final WebSocket socket;
  private final StringBuilder partial = new StringBuilder();

  public WebSocketClient(int port, String path, String authorization) {
    WebSocket.Builder builder = HttpClient.newHttpClient().newWebSocketBuilder();
    if (authorization != null) {
      builder.header("Authorization", "Bearer " + authorization);
    }
    socket =
        builder.buildAsync(URI.create("ws://127.0.0.1:" + port + path), this).join();
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    partial.append(data);
    if (last) {
      frames.add(partial.toString());
      partial.setLength(0);
    }
    webSocket.request(1);
    return null;
  }

  @Override
  public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    closed.complete(statusCode);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closed.complete(-1);
  }

  public void send(String json) {
    socket.sendText(json, true).join();
  }

  public JsonNode next() throws InterruptedException {
    String frame = frames.poll(15, TimeUnit.SECONDS);
    assertThat(frame).as("a frame within 15 s").isNotNull();
    return frame.equals("[DONE]")
        ? Json.MAPPER.getNodeFactory().textNode("[DONE]")
        : Json.read(frame, JsonNode.class);
  }

  /** Frames up to and including the first one the predicate accepts. */
  public List<JsonNode> until(java.util.function.Predicate<JsonNode> last)
      throws InterruptedException {
    List<JsonNode> received = new ArrayList<>();
    JsonNode frame;
    do {
      frame = next();
      received.add(frame);
    } while (!last.test(frame));
    return received;
  }

  @Override
  public void close() {
    socket.abort();
  }
}
