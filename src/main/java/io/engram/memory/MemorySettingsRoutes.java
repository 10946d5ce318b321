package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * /api/memory/settings: the organization's memory write mode and what its encodes do with near
 * duplicates. Anyone signed in to the organization (or any of its API keys) reads them; owners,
 * admins and admin API keys change them, and only on a paid plan can they choose the candidate
 * review path.
 */
public final class MemorySettingsRoutes implements RouteModule {
  static final String PATH = "/api/memory/settings";

  private final MemoryControl memory;
  private final long maxBodyBytes;

  public MemorySettingsRoutes(MemoryControl memory, long maxBodyBytes) {
    this.memory = memory;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public void register(Routes routes) {
    routes
        .get(PATH, Requires.signedIn(), ctx -> Responses.json(ctx, view(Access.caller(ctx), null)))
        .patch(PATH, Requires.signedIn(), ctx -> {
          Principal caller = Access.caller(ctx);
          JsonBody body = JsonBody.parse(ctx, maxBodyBytes)
              .allowOnly(Set.of("writeMode", NEAR_DUPLICATES, TTLS));
          if (!body.has("writeMode") && !body.has(NEAR_DUPLICATES) && !body.has(TTLS)) {
            throw ApiException.badRequest(
                "writeMode", "Set 'writeMode', '" + NEAR_DUPLICATES + "' or '" + TTLS + "'");
          }
          // Both checked before either is applied: a bad one changes nothing.
          Optional<WriteMode> mode = body.optionalString("writeMode", 32)
              .map(id -> WriteMode.fromId(id)
                  .orElseThrow(() -> ApiException.badRequest(
                      "writeMode",
                      "'writeMode' must be direct or candidate_review, got '" + id + "'")));
          Optional<NearDuplicates> near = body.optionalObject(NEAR_DUPLICATES)
              .map(object ->
                  nearDuplicates(object, memory.settings(caller.organization()).nearDuplicates()));
          Optional<Map<MemoryKind, Duration>> ttls = body.optionalObject(TTLS)
              .map(object -> ttls(object, memory.settings(caller.organization()).ttlByKind()));
          mode.ifPresent(chosen -> memory.setWriteMode(caller, chosen));
          near.ifPresent(chosen -> memory.setNearDuplicates(caller, chosen));
          ttls.ifPresent(chosen -> memory.setTtlByKind(caller, chosen));
          Responses.json(
              ctx,
              view(
                  caller,
                  mode.map(chosen -> "Memory write mode set to " + chosen.id())
                      .orElseGet(
                          () -> near.map(n -> "Near duplicates: " + n.action().id())
                              .orElse("Default time to live per kind set"))));
        });
  }

  static final String NEAR_DUPLICATES = "nearDuplicates";
  static final String TTLS = "ttlByKind";
  /** A default time to live is at least a minute and at most ten years. */
  private static final long MIN_TTL = 60;

  private static final long MAX_TTL = 10L * 366 * 24 * 3600;

  /**
   * {@code {"<kind>": seconds | null}}: each kind given gets that time to live (null: none);
   * kinds left out keep theirs.
   */
  private static Map<MemoryKind, Duration> ttls(
      ObjectNode object, Map<MemoryKind, Duration> current) {
    Map<MemoryKind, Duration> ttls = new java.util.EnumMap<>(MemoryKind.class);
    ttls.putAll(current);
    for (Map.Entry<String, JsonNode> entry : object.properties()) {
      String where = TTLS + "." + entry.getKey();
      MemoryKind kind = MemoryKind.fromId(entry.getKey())
          .orElseThrow(() -> ApiException.badRequest(
              where, "'" + entry.getKey() + "' is not a memory kind: " + MemoryKind.allIds()));
      JsonNode value = entry.getValue();
      if (value.isNull()) {
        ttls.remove(kind);
      } else if (value.canConvertToLong()
          && value.isIntegralNumber()
          && value.asLong() >= MIN_TTL
          && value.asLong() <= MAX_TTL) {
        ttls.put(kind, Duration.ofSeconds(value.asLong()));
      } else {
        throw ApiException.badRequest(
            where,
            "'" + where + "' is a time to live in whole seconds, from " + MIN_TTL + " to " + MAX_TTL
                + ", or null for none");
      }
    }
    return ttls;
  }

  /**
   * {@code {"action": "keep|merge|candidate", "similarity": 0.8-1}}: what is given replaces what
   * {@code current} says.
   */
  private static NearDuplicates nearDuplicates(ObjectNode object, NearDuplicates current) {
    for (String field : (Iterable<String>) object::fieldNames) {
      if (!field.equals("action") && !field.equals("similarity")) {
        throw ApiException.badRequest(
            NEAR_DUPLICATES + "." + field,
            "'" + NEAR_DUPLICATES + "' takes action and similarity, not '" + field + "'");
      }
    }
    NearDuplicates.Action action = current.action();
    if (object.hasNonNull("action")) {
      String id = object.get("action").asText();
      action =
          object.get("action").isTextual() ? NearDuplicates.Action.fromId(id).orElse(null) : null;
      if (action == null) {
        throw ApiException.badRequest(
            NEAR_DUPLICATES + ".action",
            "'" + NEAR_DUPLICATES + ".action' must be keep, merge or candidate, got '" + id + "'");
      }
    }
    double similarity = current.similarity();
    if (object.has("similarity")) {
      JsonNode value = object.get("similarity");
      if (!value.isNumber()
          || value.asDouble() < NearDuplicates.MIN_SIMILARITY
          || value.asDouble() > 1) {
        throw ApiException.badRequest(
            NEAR_DUPLICATES + ".similarity",
            "'" + NEAR_DUPLICATES + ".similarity' must be a number from "
                + NearDuplicates.MIN_SIMILARITY + " to 1 (the cosine of two memories' embeddings)");
      }
      similarity = value.asDouble();
    }
    return new NearDuplicates(action, similarity);
  }

  private Map<String, Object> view(Principal caller, String message) {
    boolean paid = caller.organization().plan().isPaid();
    Map<String, Object> settings = new LinkedHashMap<>();
    MemorySettingsStore.Settings stored = memory.settings(caller.organization());
    settings.put("writeMode", stored.writeMode().id());
    settings.put(
        "availableWriteModes",
        paid
            ? List.of(WriteMode.DIRECT.id(), WriteMode.CANDIDATE_REVIEW.id())
            : List.of(WriteMode.DIRECT.id()));
    settings.put("plan", caller.organization().plan().id());
    settings.put("idempotencyRetentionHours", MemoryWrites.IDEMPOTENCY_RETENTION.toHours());
    NearDuplicates near = stored.nearDuplicates();
    Map<String, Object> nearView = new LinkedHashMap<>();
    nearView.put("action", near.action().id());
    nearView.put("similarity", near.similarity());
    settings.put(NEAR_DUPLICATES, nearView);
    Map<String, Long> ttlView = new java.util.TreeMap<>();
    stored.ttlByKind().forEach((kind, ttl) -> ttlView.put(kind.id(), ttl.toSeconds()));
    settings.put(TTLS, ttlView);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", true);
    body.put("settings", settings);
    if (message != null) {
      body.put("message", message);
    }
    return body;
  }
}
