package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.ContextCut;
import io.engram.memory.RetrievalRequest;
import io.engram.platform.http.ApiException;
import java.util.Set;

/**
 * Whether and how a request runs inside the organization's memory: on by default, with up to
 * {@code limit} memories in a block of at most {@code maxTokens} tokens ({@code null}: the
 * organization's {@code memory.context_tokens}). The body field {@code memory} takes
 * {@code false}, {@code true} or {@code {enabled, limit, max_tokens}}; the header
 * {@code X-Engram-Memory: off} turns it off for clients that cannot add body fields.
 */
public record MemoryOptions(boolean enabled, int limit, Integer maxTokens) {
  public static final int DEFAULT_LIMIT = ContextCut.LIMIT;
  public static final MemoryOptions DEFAULT = new MemoryOptions(true, DEFAULT_LIMIT, null);
  public static final MemoryOptions OFF = new MemoryOptions(false, DEFAULT_LIMIT, null);

  static MemoryOptions parse(JsonNode value) {
    if (value == null) {
      return DEFAULT;
    }
    if (value.isBoolean()) {
      return value.asBoolean() ? DEFAULT : OFF;
    }
    if (!value.isObject()) {
      throw ApiException.badRequest(
          "memory", "'memory' must be true, false or {enabled, limit, max_tokens}");
    }
    for (var names = value.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!Set.of("enabled", "limit", "max_tokens").contains(name)) {
        throw ApiException.badRequest(
            "memory." + name,
            "Unknown memory option '" + name + "'; options: enabled, limit, max_tokens");
      }
    }
    JsonNode enabled = value.get("enabled");
    if (enabled != null && !enabled.isBoolean()) {
      throw ApiException.badRequest("memory.enabled", "'memory.enabled' must be true or false");
    }
    int limit =
        bounded(value.get("limit"), "memory.limit", 1, RetrievalRequest.MAX_LIMIT, DEFAULT_LIMIT);
    Integer maxTokens = value.get("max_tokens") == null
        ? null
        : bounded(
            value.get("max_tokens"),
            "memory.max_tokens",
            RetrievalRequest.MIN_CONTEXT_TOKENS,
            RetrievalRequest.MAX_CONTEXT_TOKENS,
            0);
    return new MemoryOptions(enabled == null || enabled.asBoolean(), limit, maxTokens);
  }

  private static int bounded(JsonNode value, String field, int min, int max, int fallback) {
    if (value == null) {
      return fallback;
    }
    if (!value.isIntegralNumber()
        || !value.canConvertToInt()
        || value.asInt() < min
        || value.asInt() > max) {
      throw ApiException.badRequest(
          field, "'" + field + "' must be an integer between " + min + " and " + max);
    }
    return value.asInt();
  }

  public MemoryOptions off() {
    return new MemoryOptions(false, limit, maxTokens);
  }
}
