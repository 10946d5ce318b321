package io.engram.inference.routing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.net.URI;
import java.time.Instant;
import java.util.Map;

/**
 * A model server the gateway sends requests to: the server's (the operator's, {@code orgId} null)
 * or one organization's own. {@code apiKey} and the {@code headers}' values are secrets: held
 * sealed in the database and never shown; the view names the headers and says whether a key is
 * set. {@code timeoutSeconds} bounds each call to it (null: the organization's REQUEST_TIMEOUT).
 * {@code replyLimitField} names the field the gateway sets the reply's limit in when the client
 * set none ({@code max_tokens}, or {@code max_completion_tokens}, which OpenAI's reasoning models
 * require).
 */
public record Provider(
    String id,
    String orgId,
    String name,
    ProviderKind kind,
    URI baseUrl,
    String apiKey,
    Map<String, String> headers,
    String apiVersion,
    Integer timeoutSeconds,
    String replyLimitField,
    long createdAt,
    long updatedAt) {

  public static final String MAX_TOKENS = "max_tokens";
  public static final String MAX_COMPLETION_TOKENS = "max_completion_tokens";

  public boolean isServers() {
    return orgId == null;
  }

  /** What anyone allowed to manage it sees: no key, no header value. */
  public ObjectNode view() {
    ObjectNode view = Json.MAPPER
        .createObjectNode()
        .put("id", id)
        .put("object", "provider")
        .put("name", name)
        .put("kind", kind.wireName())
        .put("base_url", baseUrl.toString())
        .put("api_key_set", apiKey != null)
        .put("owned_by", isServers() ? "server" : "organization");
    var names = view.putArray("headers");
    headers.keySet().stream().sorted().forEach(names::add);
    view.put("api_version", apiVersion);
    if (timeoutSeconds == null) {
      view.putNull("timeout_seconds");
    } else {
      view.put("timeout_seconds", timeoutSeconds);
    }
    view.put("reply_limit_field", replyLimitField);
    view.put("created_at", Instant.ofEpochMilli(createdAt).toString());
    view.put("updated_at", Instant.ofEpochMilli(updatedAt).toString());
    return view;
  }
}
