package io.engram.inference.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * How to generate: the spec's common parameters with its ranges and defaults. {@code maxTokens}
 * is null when the caller left it out; the gateway then picks the default within the plan and the
 * model's context (see the gateway). {@code asSent} holds the sampling fields the client set (not
 * null), under the names and at the values it sent them: an upstream gets those and no default
 * of ours, so its own defaults hold (a reasoning model refuses a temperature nobody asked for).
 */
public record Sampling(
    Integer maxTokens,
    double temperature,
    double topP,
    double frequencyPenalty,
    double presencePenalty,
    List<String> stop,
    Long seed,
    ObjectNode asSent) {
  public static final int DEFAULT_MAX_TOKENS = 2048;
  public static final int MAX_STOP_SEQUENCES = 4;
  public static final int MAX_STOP_LENGTH = 256;
  public static final List<String> FIELDS = List.of(
      "max_tokens",
      "max_completion_tokens",
      "temperature",
      "top_p",
      "frequency_penalty",
      "presence_penalty",
      "stop",
      "seed");

  /** Sampling nobody sent (a trainer's check, the local engine's tests): nothing as sent. */
  public Sampling(
      Integer maxTokens,
      double temperature,
      double topP,
      double frequencyPenalty,
      double presencePenalty,
      List<String> stop,
      Long seed) {
    this(
        maxTokens,
        temperature,
        topP,
        frequencyPenalty,
        presencePenalty,
        stop,
        seed,
        Json.MAPPER.createObjectNode());
  }

  public static Sampling parse(JsonBody body) {
    if (body.has("max_tokens") && body.has("max_completion_tokens")) {
      throw ApiException.badRequest(
          "max_completion_tokens", "Send either 'max_tokens' or 'max_completion_tokens', not both");
    }
    String maxField = body.has("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    Integer maxTokens = body.optionalInt(maxField, 1, Integer.MAX_VALUE).orElse(null);
    ObjectNode asSent = Json.MAPPER.createObjectNode();
    for (String field : FIELDS) {
      JsonNode value = body.get(field);
      if (value != null && !value.isNull()) {
        asSent.set(field, value);
      }
    }
    return new Sampling(
        maxTokens,
        body.optionalNumber("temperature", 0, 2).orElse(1.0),
        body.optionalNumber("top_p", 0, 1).orElse(1.0),
        body.optionalNumber("frequency_penalty", -2, 2).orElse(0.0),
        body.optionalNumber("presence_penalty", -2, 2).orElse(0.0),
        stop(body.get("stop")),
        seed(body.get("seed")),
        asSent);
  }

  /** Whether the client set a limit on the reply's tokens (under either of OpenAI's names). */
  public boolean capSent() {
    return asSent.has("max_tokens") || asSent.has("max_completion_tokens");
  }

  /** {@code stop}: one string or up to four, as OpenAI takes them. */
  private static List<String> stop(JsonNode value) {
    if (value == null) {
      return List.of();
    }
    List<JsonNode> items = new ArrayList<>();
    if (value.isArray()) {
      value.forEach(items::add);
    } else {
      items.add(value);
    }
    if (items.size() > MAX_STOP_SEQUENCES) {
      throw ApiException.badRequest(
          "stop", "'stop' may hold at most " + MAX_STOP_SEQUENCES + " sequences");
    }
    List<String> stops = new ArrayList<>();
    for (JsonNode item : items) {
      if (!item.isTextual()
          || item.asText().isEmpty()
          || item.asText().length() > MAX_STOP_LENGTH) {
        throw ApiException.badRequest(
            "stop",
            "'stop' must be a string or an array of non-empty strings of at most " + MAX_STOP_LENGTH
                + " characters");
      }
      stops.add(item.asText());
    }
    return List.copyOf(stops);
  }

  private static Long seed(JsonNode value) {
    if (value == null) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong()) {
      throw ApiException.badRequest("seed", "'seed' must be an integer");
    }
    return value.asLong();
  }

  /**
   * The same with the reply's limit lowered to {@code tokens}, as the client had sent it: the
   * field it used (max_tokens or max_completion_tokens) carries the new value to an upstream.
   */
  public Sampling clampedTo(int tokens) {
    ObjectNode sent = asSent.deepCopy();
    for (String field : List.of("max_tokens", "max_completion_tokens")) {
      if (sent.has(field)) {
        sent.put(field, tokens);
      }
    }
    return new Sampling(
        tokens, temperature, topP, frequencyPenalty, presencePenalty, stop, seed, sent);
  }

  public Sampling withMaxTokens(int tokens) {
    return new Sampling(
        tokens, temperature, topP, frequencyPenalty, presencePenalty, stop, seed, asSent);
  }
}
