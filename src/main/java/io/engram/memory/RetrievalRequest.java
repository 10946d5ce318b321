package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.WireNames;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * A validated retrieval request. Besides the spec's four fields it takes filters (subject,
 * memoryKind, a time range on occurredAt, a session, metadata, {@code asOf}: what was true then, null for now; the end user is the
 * boundary's), the context budget, the ranking mode (for comparing
 * and debugging; hybrid with activation is what ships) and whether the results count as a use.
 */
public record RetrievalRequest(
    String query,
    int limit,
    boolean includeContext,
    ContextMode contextMode,
    int maxContextTokens,
    String subject,
    Set<MemoryKind> kinds,
    Instant after,
    Instant before,
    RankingMode mode,
    boolean useActivation,
    boolean recordUse,
    String session,
    MetadataFilters filters,
    Instant asOf) {
  public static final int DEFAULT_LIMIT = 10;
  public static final int MAX_LIMIT = 100;
  public static final int MAX_QUERY = 4_000;
  public static final int DEFAULT_CONTEXT_TOKENS = 1_024;
  public static final int MIN_CONTEXT_TOKENS = 64;
  public static final int MAX_CONTEXT_TOKENS = 16_000;

  /** Which candidates relevance is computed from. */
  public enum RankingMode {
    HYBRID,
    LEXICAL,
    VECTOR;

    String id() {
      return WireNames.of(this);
    }
  }

  static final Set<String> FIELDS = Set.of(
      "query",
      "limit",
      "includeContext",
      "contextMode",
      "maxContextTokens",
      "subject",
      "memoryKind",
      "after",
      "before",
      "mode",
      "useActivation",
      "recordUse",
      EndUsers.USER_FIELD,
      EndUsers.SESSION_FIELD,
      MetadataFilters.FIELD,
      "asOf");

  /**
   * What a conversation asks of memory (the inference gateway): the shipped hybrid ranking with
   * activation, the full context within the token budget, no filters; the gateway records the
   * uses of what it puts in the prompt itself, so retrieval records none.
   */
  public static RetrievalRequest forConversation(String query, int limit, int tokenBudget) {
    return new RetrievalRequest(
        query,
        limit,
        true,
        ContextMode.FULL,
        tokenBudget,
        null,
        Set.of(),
        null,
        null,
        RankingMode.HYBRID,
        true,
        false,
        null,
        MetadataFilters.NONE,
        null);
  }

  public static RetrievalRequest parse(JsonBody body, Instant now) {
    body.allowOnly(FIELDS);
    Instant asOf = body.optionalInstant("asOf").orElse(null);
    if (asOf != null && asOf.isAfter(now.plusSeconds(MemoryInput.MAX_FUTURE_SECONDS))) {
      throw ApiException.badRequest(
          "asOf", "'asOf' is in the future: memory knows what was true until now");
    }
    String query = body.requiredString("query", MAX_QUERY);
    int limit = body.optionalInt("limit", 1, MAX_LIMIT).orElse(DEFAULT_LIMIT);
    boolean includeContext = body.optionalBoolean("includeContext").orElse(false);
    ContextMode contextMode = body.optionalString("contextMode", 32)
        .map(id -> ContextMode.fromId(id)
            .orElseThrow(() -> ApiException.badRequest(
                "contextMode",
                "'contextMode' must be one of " + ContextMode.allIds() + ", got '" + id + "'")))
        .orElse(ContextMode.FULL);
    if (!includeContext && (body.has("contextMode") || body.has("maxContextTokens"))) {
      throw ApiException.badRequest(
          body.has("contextMode") ? "contextMode" : "maxContextTokens",
          "'contextMode' and 'maxContextTokens' shape the context block: send them with \"includeContext\": true");
    }
    int maxTokens = body.optionalInt("maxContextTokens", MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS)
        .orElse(DEFAULT_CONTEXT_TOKENS);
    String subject = body.optionalString("subject", MemoryInput.MAX_SUBJECT).orElse(null);
    Set<MemoryKind> kinds = kinds(body);
    Instant after = body.optionalInstant("after").orElse(null);
    Instant before = body.optionalInstant("before").orElse(null);
    if (after != null && before != null && !after.isBefore(before)) {
      throw ApiException.badRequest("before", "'before' must be later than 'after'");
    }
    RankingMode mode = body.optionalString("mode", 16)
        .map(id -> WireNames.parse(RankingMode.class, id)
            .orElseThrow(() -> ApiException.badRequest(
                "mode", "'mode' must be hybrid, lexical or vector, got '" + id + "'")))
        .orElse(RankingMode.HYBRID);
    return new RetrievalRequest(
        query,
        limit,
        includeContext,
        contextMode,
        maxTokens,
        subject,
        kinds,
        after,
        before,
        mode,
        body.optionalBoolean("useActivation").orElse(true),
        body.optionalBoolean("recordUse").orElse(true),
        EndUsers.session(body),
        MetadataFilters.parse(body.get(MetadataFilters.FIELD)),
        asOf);
  }

  /** {@code memoryKind}: one kind, or a list of kinds (any of them matches). */
  private static Set<MemoryKind> kinds(JsonBody body) {
    JsonNode value = body.get("memoryKind");
    if (value == null) {
      return Set.of();
    }
    Set<MemoryKind> kinds = new LinkedHashSet<>();
    if (value.isTextual()) {
      kinds.add(MemoryInput.kind(value.asText()));
    } else if (value.isArray() && !value.isEmpty() && value.size() <= MemoryKind.values().length) {
      for (JsonNode item : value) {
        if (!item.isTextual()) {
          throw ApiException.badRequest(
              "memoryKind", "'memoryKind' must be a kind or a list of kinds");
        }
        kinds.add(MemoryInput.kind(item.asText()));
      }
    } else {
      throw ApiException.badRequest(
          "memoryKind",
          "'memoryKind' must be a kind or a list of 1 to " + MemoryKind.values().length + " kinds");
    }
    return Set.copyOf(kinds);
  }
}
