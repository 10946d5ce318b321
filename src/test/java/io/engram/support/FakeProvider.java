package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * What the fakes of providers with their own API share: a loopback server, the key it expects,
 * every request body it received, and how it is told to fail: an error status with the API's error
 * body, or a stream cut after some events. Each fake checks requests against its API's published
 * reference and answers 400 in the API's error shape when one does not follow it, so the adapter
 * under test cannot drift from the API unnoticed.
 */
public abstract class FakeProvider implements AutoCloseable {
  private final HttpServer server;
  private final String key;
  private final List<JsonNode> requests = new CopyOnWriteArrayList<>();
  private final List<String> refusals = new CopyOnWriteArrayList<>();
  private volatile int failWith;
  private volatile int cutAfter = -1;

  protected FakeProvider(String key) {
    this.key = key;
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", exchange -> {
      try (exchange) {
        handle(exchange);
      }
    });
    server.start();
  }

  /** The API's root as a provider's base URL takes it (with its version segment). */
  public abstract String baseUrl();

  protected abstract void handle(HttpExchange exchange) throws IOException;

  protected String origin() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** The next requests fail with this status (the API's error body); 0: they succeed. */
  public void failWith(int status) {
    this.failWith = status;
  }

  /** Streams are cut after this many events (-1: never). */
  public void cutAfter(int events) {
    this.cutAfter = events;
  }

  public void normal() {
    failWith = 0;
    cutAfter = -1;
  }

  protected int failing() {
    return failWith;
  }

  protected int cutting() {
    return cutAfter;
  }

  protected boolean keyIs(String sent) {
    return key.equals(sent);
  }

  public List<JsonNode> requests() {
    return List.copyOf(requests);
  }

  public JsonNode lastRequest() {
    return requests.getLast();
  }

  /** Why the fake refused requests as not following its API (empty: none was). */
  public List<String> refusals() {
    return List.copyOf(refusals);
  }

  protected JsonNode received(HttpExchange exchange) throws IOException {
    JsonNode body = Json.MAPPER.readTree(exchange.getRequestBody());
    requests.add(body);
    return body;
  }

  protected void refused(String why) {
    refusals.add(why);
  }

  protected static void send(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  protected static OutputStream openStream(HttpExchange exchange) throws IOException {
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    return exchange.getResponseBody();
  }

  protected static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
