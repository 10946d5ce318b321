package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The organization's memory (a context access token with memory scopes). Every method takes the
 * agent boundary ({@code agent}; null: the organization level), as the REST routes' path does.
 */
public final class Memory {
  private final Engram client;

  Memory(Engram client) {
    this.client = client;
  }

  /** What a recall answers: the ranked memories and the ready prompt block. */
  public record Recall(List<JsonNode> memories, String context) {}

  /** Optional fields of a memory to remember. */
  public static Options options() {
    return new Options();
  }

  public static final class Options {
    private final ObjectNode fields = Engram.object();
    private String agent;
    private String idempotencyKey;

    public Options subject(String value) {
      fields.put("subject", value);
      return this;
    }

    /** fact, preference, event, instruction, procedure or observation. */
    public Options kind(String value) {
      fields.put("memoryKind", value);
      return this;
    }

    public Options confidence(double value) {
      fields.put("confidence", value);
      return this;
    }

    /** The session or thread the memory comes from. */
    public Options sessionId(String value) {
      fields.put("sessionId", value);
      return this;
    }

    /** When it expires (RFC 3339). */
    public Options expiresAt(String value) {
      fields.put("expiresAt", value);
      return this;
    }

    public Options agent(String value) {
      this.agent = value;
      return this;
    }

    /** Supplied when left out, so a retried write never stores twice. */
    public Options idempotencyKey(String value) {
      this.idempotencyKey = value;
      return this;
    }
  }

  static String base(String agent) {
    return agent == null
        ? "/v1/memory"
        : "/v1/memory/agents/" + URLEncoder.encode(agent, StandardCharsets.UTF_8);
  }

  public JsonNode remember(String text, Options options) {
    ObjectNode body = options.fields.deepCopy().put("text", text);
    String key = options.idempotencyKey != null ? options.idempotencyKey : UUID.randomUUID().toString();
    return client.request("POST", base(options.agent), body, Map.of(), Map.of("Idempotency-Key", key));
  }

  public JsonNode remember(String text) {
    return remember(text, options());
  }

  /** The memories ranked for a question (limit null: the server's default) and the prompt block. */
  public Recall recall(String query, Integer limit, String agent) {
    ObjectNode body = Engram.object().put("query", query).put("includeContext", true);
    if (limit != null) {
      body.put("limit", limit);
    }
    JsonNode answer = client.request("POST", base(agent) + "/recall", body);
    List<JsonNode> memories = new java.util.ArrayList<>();
    answer.path("memories").forEach(memories::add);
    return new Recall(memories, answer.path("context").path("systemBlock").asText(""));
  }

  /** Where a memory came from and every change it went through. */
  public JsonNode explain(String id, String agent) {
    return client.request("GET", base(agent) + "/" + id + "/provenance", null);
  }

  public JsonNode get(String id, String agent) {
    return client.request("GET", base(agent) + "/" + id, null);
  }

  /** Every memory of the boundary, newest first (state null: durable), page by page. */
  public Iterable<JsonNode> list(String agent, String state, Integer pageSize) {
    Map<String, Object> query = new LinkedHashMap<>();
    query.put("state", state);
    query.put("limit", pageSize);
    return client.paginate(base(agent), query, "before", "nextBefore");
  }

  /** Edits what a memory says: text, subject, memoryKind, confidence, metadata (null clears). */
  public JsonNode update(String id, Map<String, Object> patch, String agent) {
    return client.request("PATCH", base(agent) + "/" + id, patch);
  }

  public JsonNode reinforce(String id, String reason, String agent) {
    return control(id, "reinforce", reason, agent);
  }

  public JsonNode suppress(String id, String reason, String agent) {
    return control(id, "suppress", reason, agent);
  }

  public JsonNode restore(String id, String reason, String agent) {
    return control(id, "restore", reason, agent);
  }

  /** Forgets a memory: it is never recalled again (kept for provenance). */
  public JsonNode forget(String id, String agent) {
    return client.request("DELETE", base(agent) + "/" + id, null);
  }

  /**
   * Erases memories for good (an end user who asks to be forgotten): their text, metadata and
   * embeddings everywhere Engram keeps them, and the end user's conversations. {@code selector}:
   * the erase body ({@code userId}, {@code sessionId}, {@code subject}, {@code filters}, ...; on a
   * {@code forUser} client the user is implied). Starts the job and returns it once completed,
   * with its receipt (docs/memory.md, "Erasure"); an {@link IllegalStateException} after
   * {@code timeout}.
   */
  public JsonNode erase(Map<String, Object> selector, String agent, java.time.Duration timeout) {
    JsonNode erasure = client.request("POST", base(agent) + "/erase", selector);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!"completed".equals(erasure.path("status").asText())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "erasure " + erasure.path("id").asText() + " still running after " + timeout);
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while erasure ran", e);
      }
      erasure = client.request(
          "GET", base(agent) + "/erasures/" + erasure.path("id").asText(), null);
    }
    return erasure;
  }

  /** Remembers what a conversation says that lasts ({@code dryRun}: only proposes). */
  public JsonNode extract(List<Map<String, String>> messages, boolean dryRun, String agent) {
    return client.request(
        "POST", base(agent) + "/extract", Map.of("messages", messages, "dryRun", dryRun));
  }

  /** Business events: {@code events().ingest(...)}, {@code events().list(...)}. */
  public Events events() {
    return new Events(client);
  }

  /**
   * Feeds a business event to the pipeline.
   *
   * @deprecated the spec's and the other SDKs' name is {@code memory().events().ingest(...)}
   */
  @Deprecated
  public JsonNode ingest(Map<String, Object> event, String agent) {
    return events().ingest(event, agent);
  }

  /** The candidates awaiting review, oldest first. */
  public Iterable<JsonNode> candidates(String agent) {
    return client.paginate(base(agent) + "/candidates", Map.of(), "after", "nextAfter");
  }

  public JsonNode approve(String id, String agent) {
    return control(id, "approve", null, agent);
  }

  public JsonNode reject(String id, String agent) {
    return control(id, "reject", null, agent);
  }

  private JsonNode control(String id, String action, String reason, String agent) {
    ObjectNode body = Engram.object();
    if (reason != null) {
      body.put("reason", reason);
    }
    return client.request("POST", base(agent) + "/" + id + "/" + action, body);
  }
}
