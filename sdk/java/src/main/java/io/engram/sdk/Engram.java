package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Engram's Java client: the organization's memory, assistants and administration over Engram's
 * REST API, with typed errors ({@link EngramException}), retries on 429 and 503 honouring
 * {@code retry_after}, an Idempotency-Key on every memory write, pages as iterables and timeouts.
 * Chat goes through the official OpenAI Java client, which Engram serves unchanged: point it at
 * {@link #openAiBaseUrl()} with the same key.
 *
 * <pre>{@code
 * Engram engram = Engram.builder().baseUrl("http://localhost:8000").apiKey(token).build();
 * engram.memory().remember("Acme's fiscal year starts in April", Memory.options().subject("Acme"));
 * Memory.Recall recall = engram.memory().recall("When does our year begin?", 5, null);
 * }</pre>
 */
public final class Engram {
  static final ObjectMapper JSON = new ObjectMapper();

  private final URI baseUrl;
  private final String apiKey;
  private final Duration timeout;
  private final int maxRetries;
  private final String endUser;
  private final HttpClient http;
  private final Memory memory;
  private final Assistants assistants;
  private final Admin admin;

  private Engram(Builder builder) {
    if (builder.baseUrl == null || builder.apiKey == null) {
      throw new IllegalArgumentException("Engram needs a baseUrl and an apiKey");
    }
    this.baseUrl = URI.create(builder.baseUrl.replaceAll("/+$", ""));
    this.apiKey = builder.apiKey;
    this.timeout = builder.timeout;
    this.maxRetries = builder.maxRetries;
    this.endUser = builder.endUser;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    this.memory = new Memory(this);
    this.assistants = new Assistants(this);
    this.admin = new Admin(this);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Settings of a client; a base URL and a key are required. */
  public static final class Builder {
    private String baseUrl;
    private String apiKey;
    private Duration timeout = Duration.ofSeconds(30);
    private int maxRetries = 2;
    private String endUser;

    /** The server, without /v1: {@code http://localhost:8000}. */
    public Builder baseUrl(String value) {
      this.baseUrl = value;
      return this;
    }

    /** A context access token (memory, chat) or an API key (assistants, administration). */
    public Builder apiKey(String value) {
      this.apiKey = value;
      return this;
    }

    public Builder timeout(Duration value) {
      this.timeout = value;
      return this;
    }

    /** Retries of a 429 or 503 answer or a failed connection (default 2). */
    public Builder maxRetries(int value) {
      this.maxRetries = value;
      return this;
    }

    /**
     * Every call for one end user of your app (the {@code X-Engram-User} header): the memory they
     * see is theirs and the shared one, what they remember is theirs.
     */
    public Builder endUser(String value) {
      this.endUser = value;
      return this;
    }

    public Engram build() {
      return new Engram(this);
    }
  }

  public Memory memory() {
    return memory;
  }

  /** This client for one end user of your app (docs/memory.md, "End users and sessions"). */
  public Engram forUser(String userId) {
    return new Builder()
        .baseUrl(baseUrl.toString())
        .apiKey(apiKey)
        .timeout(timeout)
        .maxRetries(maxRetries)
        .endUser(userId)
        .build();
  }

  public Assistants assistants() {
    return assistants;
  }

  public Admin admin() {
    return admin;
  }

  /** The base URL the official OpenAI client takes for chat inside the organization's memory. */
  public String openAiBaseUrl() {
    return baseUrl + "/v1";
  }

  /** One request, retried on 429, 503 and connection failures; the JSON answer (or null). */
  JsonNode request(String method, String path, Object body, Map<String, Object> query,
      Map<String, String> headers) {
    URI uri = URI.create(baseUrl + path + queryString(query));
    String json;
    try {
      json = body == null ? null : JSON.writeValueAsString(body);
    } catch (IOException e) {
      throw new IllegalArgumentException("the body cannot be written as JSON", e);
    }
    for (int attempt = 0; ; attempt++) {
      HttpRequest.Builder request = HttpRequest.newBuilder(uri)
          .timeout(timeout)
          .header("Authorization", "Bearer " + apiKey)
          .header("Accept", "application/json")
          .method(method, json == null
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
      if (json != null) {
        request.header("Content-Type", "application/json");
      }
      if (endUser != null) {
        request.header("X-Engram-User", endUser);
      }
      headers.forEach(request::header);
      HttpResponse<String> response;
      try {
        response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      } catch (IOException e) {
        if (attempt < maxRetries) {
          pause(backoff(attempt));
          continue;
        }
        throw new EngramException(0, null, null, null, e.toString(), null, null);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new EngramException(0, null, null, null, "interrupted", null, null);
      }
      JsonNode answer = parse(response.body());
      int status = response.statusCode();
      if (status / 100 == 2) {
        return answer;
      }
      EngramException error =
          EngramException.of(status, answer, response.headers().firstValue("X-Request-Id").orElse(null));
      if ((status == 429 || status == 503) && attempt < maxRetries) {
        Long wait = error.retryAfter();
        pause(wait != null ? Duration.ofSeconds(wait) : backoff(attempt));
        continue;
      }
      throw error;
    }
  }

  JsonNode request(String method, String path, Object body) {
    return request(method, path, body, Map.of(), Map.of());
  }

  /** Every item of a paged list, page after page, as Engram's cursors lead. */
  Iterable<JsonNode> paginate(String path, Map<String, Object> query, String param, String next) {
    return () -> new Iterator<>() {
      private final List<JsonNode> page = new ArrayList<>();
      private String cursor;
      private boolean last;

      @Override
      public boolean hasNext() {
        while (page.isEmpty() && !last) {
          Map<String, Object> asked = new LinkedHashMap<>(query);
          asked.put(param, cursor);
          JsonNode answer = request("GET", path, null, asked, Map.of());
          answer.path("data").forEach(page::add);
          cursor = answer.path(next).isTextual() ? answer.path(next).asText() : null;
          last = cursor == null;
        }
        return !page.isEmpty();
      }

      @Override
      public JsonNode next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return page.remove(0);
      }
    };
  }

  static ObjectNode object() {
    return JSON.createObjectNode();
  }

  private static JsonNode parse(String text) {
    if (text == null || text.isEmpty()) {
      return null;
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }

  private static String queryString(Map<String, Object> query) {
    StringBuilder text = new StringBuilder();
    query.forEach((name, value) -> {
      if (value != null) {
        text.append(text.length() == 0 ? '?' : '&')
            .append(URLEncoder.encode(name, StandardCharsets.UTF_8))
            .append('=')
            .append(URLEncoder.encode(String.valueOf(value), StandardCharsets.UTF_8));
      }
    });
    return text.toString();
  }

  private static Duration backoff(int attempt) {
    long millis = Math.min(8_000, 250L << attempt);
    return Duration.ofMillis((long) (millis * (0.5 + ThreadLocalRandom.current().nextDouble() / 2)));
  }

  private static void pause(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
