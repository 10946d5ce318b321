package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Solr's HTTP API, on any of the cluster's nodes: a request goes to the next node in turn, and to
 * the one after when a node cannot be reached or says it cannot serve (5xx: a shard without a live
 * replica there). SolrJ is not used: it brings its own Jetty and Lucene, of other versions than
 * Engram's. Every request has a deadline ({@code ENGRAM_SOLR_TIMEOUT_MS} across all its tries), so
 * an engine that stopped answering fails a request in bounded time, never hangs it.
 */
public final class SolrConnection {
  /** Solr's answer could not be had from any node: the engine is away. */
  public static final class Unavailable extends RuntimeException {
    Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Solr refused the request itself (4xx): a defect in what Engram sent, not the engine away. */
  public static final class Refused extends RuntimeException {
    final int status;

    Refused(int status, String message) {
      super(message);
      this.status = status;
    }
  }

  private final List<URI> nodes;
  private final String authorization;
  private final Duration timeout;
  private final HttpClient http;
  private final AtomicInteger next = new AtomicInteger();

  public SolrConnection(List<URI> nodes, String username, String password, Duration timeout) {
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("no Solr node given");
    }
    this.nodes = List.copyOf(nodes);
    this.authorization = username.isEmpty()
        ? null
        : "Basic "
            + Base64.getEncoder()
                .encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    this.timeout = timeout;
    this.http = HttpClient.newBuilder()
        .connectTimeout(Duration.ofMillis(Math.min(timeout.toMillis(), 2_000)))
        .version(HttpClient.Version.HTTP_1_1)
        .build();
  }

  /** How long one request may take, over all the nodes it tries (ENGRAM_SOLR_TIMEOUT_MS). */
  public Duration timeout() {
    return timeout;
  }

  /** GET {@code path} (under a node's /solr) with these parameters. */
  public JsonNode get(String path, Map<String, String> params) {
    return send(path, params, null, null, timeout);
  }

  /**
   * A cluster operation (creating a collection, moving an alias), which Solr may take tens of
   * seconds over: its own deadline, not a search's.
   */
  public JsonNode administer(String path, Map<String, String> params) {
    return send(path, params, null, null, ADMINISTRATION);
  }

  /** How long a cluster operation may take. */
  static final Duration ADMINISTRATION = Duration.ofSeconds(120);

  /** POST a JSON body to {@code path}. */
  public JsonNode postJson(String path, Map<String, String> params, Object body) {
    return postJson(path, params, body, timeout);
  }

  /** POST a JSON body to {@code path}, with a deadline of its own (a bulk load's batch). */
  public JsonNode postJson(String path, Map<String, String> params, Object body, Duration within) {
    return send(
        path,
        params,
        Json.write(body).getBytes(StandardCharsets.UTF_8),
        "application/json",
        within);
  }

  /**
   * POST a JSON body to {@code path} under one of {@code bases} (the cores of a shard, say), the
   * next in turn first and the others when it cannot answer, within the usual deadline.
   */
  public JsonNode postJsonAt(
      List<URI> bases, String path, Map<String, String> params, Object body) {
    return send(
        bases,
        path,
        params,
        Json.write(body).getBytes(StandardCharsets.UTF_8),
        "application/json",
        timeout);
  }

  /** POST raw bytes (a configset's zip) to {@code path}. */
  public JsonNode postBytes(String path, Map<String, String> params, byte[] body) {
    return send(path, params, body, "application/octet-stream", ADMINISTRATION);
  }

  private JsonNode send(
      String path, Map<String, String> params, byte[] body, String type, Duration within) {
    return send(nodes, path, params, body, type, within);
  }

  private JsonNode send(
      List<URI> bases,
      String path,
      Map<String, String> params,
      byte[] body,
      String type,
      Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    Exception last = null;
    int start = Math.floorMod(next.getAndIncrement(), bases.size());
    for (int i = 0; i < bases.size(); i++) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      URI node = bases.get((start + i) % bases.size());
      try {
        HttpResponse<String> response = http.send(
            request(node, path, params, body, type, Duration.ofNanos(left)),
            HttpResponse.BodyHandlers.ofString());
        int status = response.statusCode();
        if (status >= 500 || status == 404 && !response.body().startsWith("{")) {
          last = new IOException(node + " answered " + status + ": " + brief(response.body()));
          continue;
        }
        JsonNode answer = Json.read(response.body(), JsonNode.class);
        if (status >= 400) {
          throw new Refused(status, "Solr refused " + path + ": " + message(answer));
        }
        return answer;
      } catch (IOException e) {
        last = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new Unavailable("interrupted while asking Solr", e);
      } catch (RuntimeException e) {
        if (e instanceof Refused) {
          throw e;
        }
        last = e;
      }
    }
    throw new Unavailable(
        "Solr cannot be reached at " + bases + " within " + within.toMillis() + " ms: "
            + (last == null ? "the deadline passed" : last.toString()),
        last);
  }

  private HttpRequest request(
      URI node, String path, Map<String, String> params, byte[] body, String type, Duration left) {
    StringJoiner query = new StringJoiner("&", "?", "");
    query.add("wt=json");
    params.forEach((name, value) -> query.add(encode(name) + "=" + encode(value)));
    String base = node.toString().endsWith("/") ? node.toString() : node + "/";
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(base + path + query)).timeout(left);
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    if (body == null) {
      request.GET();
    } else {
      request.header("Content-Type", type).POST(HttpRequest.BodyPublishers.ofByteArray(body));
    }
    return request.build();
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  private static String message(JsonNode answer) {
    JsonNode error = answer.path("error");
    return error.isMissingNode() ? brief(answer.toString()) : error.path("msg").asText();
  }

  private static String brief(String text) {
    return text.length() > 300 ? text.substring(0, 300) + "..." : text;
  }
}
