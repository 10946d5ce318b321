package io.engram.memory.transfer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.AgentSlug;
import io.engram.access.Principal;
import io.engram.memory.AgentScope;
import io.engram.memory.ChangeAuthor;
import io.engram.memory.Embedder;
import io.engram.memory.EndUsers;
import io.engram.memory.MemoryInput;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySource;
import io.engram.memory.MemoryState;
import io.engram.memory.Transition;
import io.engram.memory.UseHistory;
import io.engram.memory.UseKind;
import io.engram.memory.Validity;
import io.engram.platform.Digests;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One line of an import, read and checked: a memory as an export wrote it, or as a client wrote it
 * by hand (an encode's body, plus the fields an export adds, all optional). A line is read as an
 * encode body is, by the same rules, except that an {@code expiresAt} may be past (the memory
 * expired since it was exported: housekeeping tombstones it) and explicit nulls mean absent (an
 * export writes them). Its boundary is the route's; a line may name an agent or end user only at
 * a level the route leaves open, as an encode's {@code userId} does.
 *
 * @param number the line's number in the file, from 1
 * @param sourceId the id the line gives, or one derived from its content when it gives none
 * @param memory the memory to write, under {@code sourceId}, with the kept vector or none
 * @param history the transitions it went through before it was exported (its provenance)
 */
record ImportLine(int number, String sourceId, MemoryRecord memory, List<Transition> history) {
  /** The object an export's last line is: it says the export ended, and is skipped here. */
  static final String END = "export.end";

  private static final Pattern ID = Pattern.compile("^mem_[0-9a-hjkmnp-tv-z]{26}$");
  private static final Set<String> EXPORT_FIELDS = Set.of(
      "object",
      "id",
      "state",
      "agent",
      "source",
      "eventId",
      "createdAt",
      "updatedAt",
      "lastUsedAt",
      "useCount",
      "reinforcementCount",
      "retrievalCount",
      "uses",
      "embedding",
      "transitions");
  private static final Set<String> TRANSITION_FIELDS = Set.of(
      "from", "to", "action", "reason", "actor", "credentialId", "userId", "requestId", "at");

  /**
   * The line as a memory in boundary {@code scope}, or null for an export's closing line; a
   * mistake throws the {@link ApiException} an encode would, its message saying which line.
   */
  static ImportLine parse(
      String text, int number, Principal caller, AgentScope scope, String requestId, Instant now) {
    try {
      return read(text, number, caller, scope, requestId, now);
    } catch (ApiException e) {
      throw e.withMessage("line " + number + ": " + e.getMessage(), lineParam(number, e.param()));
    }
  }

  static String lineParam(int number, String param) {
    return "line " + number + (param == null ? "" : "." + param);
  }

  private static ImportLine read(
      String text, int number, Principal caller, AgentScope scope, String requestId, Instant now) {
    JsonNode parsed;
    try (com.fasterxml.jackson.core.JsonParser parser = Json.MAPPER.createParser(text)) {
      parsed = Json.MAPPER.readTree(parser);
      if (parser.nextToken() != null) {
        throw ApiException.badRequest(null, "a line holds one JSON object; more follows it");
      }
    } catch (JsonProcessingException e) {
      throw ApiException.badRequest(null, "not JSON: " + e.getOriginalMessage());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e); // a string is always readable
    }
    if (!(parsed instanceof ObjectNode line)) {
      throw ApiException.badRequest(null, "a line must be one JSON object (a memory)");
    }
    String object = line.path("object").asText("memory");
    if (object.equals(END)) {
      return null;
    }
    if (!object.equals("memory")) {
      throw ApiException.badRequest(
          "object", "'object' must be 'memory' (or '" + END + "', an export's last line)");
    }
    ObjectNode present = withoutNulls(line);
    JsonBody body = JsonBody.received(present);
    Set<String> allowed = new HashSet<>(MemoryInput.FIELDS);
    allowed.addAll(EXPORT_FIELDS);
    body.allowOnly(allowed);

    AgentScope boundary =
        EndUsers.withBody(new AgentScope(agent(body, scope, caller), scope.user()), caller, body);
    ObjectNode encoded = present.deepCopy();
    encoded.retain(MemoryInput.FIELDS);
    Instant expiresAt = body.optionalInstant("expiresAt").orElse(null);
    encoded.remove("expiresAt"); // an encode refuses a past one; an import keeps it
    MemoryInput input = MemoryInput.parse(JsonBody.of(encoded), now);
    Validity validity = new Validity(
        input.validity().validFrom(),
        input.validity().validUntil(),
        expiresAt,
        input.validity().supersedes());

    Instant createdAt = notLater(body, "createdAt", now).orElse(now);
    Instant updatedAt = notLater(body, "updatedAt", now).orElse(createdAt);
    Instant occurredAt = input.occurredAt() == null ? createdAt : input.occurredAt();
    MemoryState state =
        body.optionalString("state", 32).map(id -> state(id, "state")).orElse(MemoryState.DURABLE);
    MemorySource source =
        body.optionalString("source", 32).map(ImportLine::source).orElse(MemorySource.ENCODE);
    UseHistory uses = body.optionalObject("uses")
        .map(node -> uses(node, now))
        .orElseGet(() -> UseHistory.first(
            UseKind.ENCODE, occurredAt.isBefore(createdAt) ? occurredAt : createdAt));
    MemoryRecord.UseCounts counts = new MemoryRecord.UseCounts(
        count(body, "reinforcementCount"), count(body, "retrievalCount"));
    String indexed = MemoryRecord.indexedText(input.subject(), input.text());
    float[] vector =
        body.optionalObject("embedding").map(e -> vector(e, indexed)).orElse(null);

    String sourceId = body.optionalString("id", 64)
        .map(id -> {
          if (!ID.matcher(id).matches()) {
            throw ApiException.badRequest("id", "'id' must be a memory id (mem_ and 26 letters)");
          }
          return id;
        })
        .orElseGet(() -> Ids.derived(
            "mem",
            createdAt.toEpochMilli(),
            String.join(
                "\n",
                String.valueOf(boundary.agent()),
                String.valueOf(boundary.user()),
                indexed,
                occurredAt.toString())));
    MemoryRecord memory = new MemoryRecord(
        sourceId,
        caller.orgId(),
        boundary.agent(),
        boundary.user(),
        input.session(),
        input.text(),
        input.subject(),
        input.kind(),
        input.confidence(),
        input.metadataJson(),
        state,
        new MemoryRecord.Origin(
            source,
            body.optionalString("eventId", 64).orElse(null),
            null,
            ChangeAuthor.of(caller, requestId)),
        occurredAt,
        createdAt,
        updatedAt,
        uses,
        counts,
        vector,
        validity);
    return new ImportLine(number, sourceId, memory, transitions(body.get("transitions"), now));
  }

  private static ObjectNode withoutNulls(ObjectNode node) {
    ObjectNode present = node.deepCopy();
    present.properties().removeIf(field -> field.getValue().isNull());
    return present;
  }

  /** {@code transitions}, as exported: each {from?, to, action, reason?, actor?, ..., at}. */
  private static List<Transition> transitions(JsonNode node, Instant now) {
    if (node == null) {
      return List.of();
    }
    if (!node.isArray()) {
      throw ApiException.badRequest(
          "transitions", "'transitions' must be an array of {from, to, action, reason, actor, at}");
    }
    List<Transition> history = new ArrayList<>();
    for (int i = 0; i < node.size(); i++) {
      String where = "transitions[" + i + "]";
      if (!(node.get(i) instanceof ObjectNode object)) {
        throw ApiException.badRequest(where, "'" + where + "' must be an object");
      }
      JsonBody t = JsonBody.received(withoutNulls(object)).allowOnly(TRANSITION_FIELDS);
      history.add(new Transition(
          null,
          t.optionalString("from", 32).map(id -> state(id, where + ".from")).orElse(null),
          state(t.requiredString("to", 32), where + ".to"),
          t.requiredString("action", 64),
          t.optionalString("reason", 4_000).orElse(null),
          t.optionalString("actor", 200).orElse(null),
          t.optionalString("credentialId", 200).orElse(null),
          t.optionalString("userId", 200).orElse(null),
          t.optionalString("requestId", 200).orElse(null),
          notLater(t, "at", now)
              .orElseThrow(() -> ApiException.badRequest(where + ".at", "'at' is required"))));
    }
    return history;
  }

  private static MemoryState state(String id, String param) {
    return MemoryState.fromId(id)
        .orElseThrow(() -> ApiException.badRequest(
            param, "'" + param + "' must be candidate, durable, suppressed or tombstoned"));
  }

  /** The line's agent: the route's, or at the organization level the one the line names. */
  private static String agent(JsonBody body, AgentScope scope, Principal caller) {
    String named = body.optionalString("agent", 64).orElse(null);
    if (named == null) {
      return scope.agent();
    }
    if (scope.agent() != null && !scope.agent().equals(named)) {
      throw ApiException.badRequest(
          "agent",
          "the line names agent '" + named + "' but the route imports into agent '" + scope.agent()
              + "'; leave 'agent' out to import into it");
    }
    if (!AgentSlug.isValid(named)) {
      throw ApiException.badRequest(
          "agent", "'" + named + "' is not a valid agent slug: " + AgentSlug.rule());
    }
    if (!caller.canReachAgent(named)) {
      throw ApiException.forbidden(
          "agent_not_allowed", "This token is not bound to agent '" + named + "'");
    }
    return named;
  }

  private static java.util.Optional<Instant> notLater(JsonBody body, String field, Instant now) {
    java.util.Optional<Instant> at = body.optionalInstant(field);
    if (at.isPresent() && at.get().isAfter(now.plusSeconds(MemoryInput.MAX_FUTURE_SECONDS))) {
      throw ApiException.badRequest(field, "'" + field + "' must not be in the future");
    }
    return at;
  }

  private static MemorySource source(String id) {
    return io.engram.platform.WireNames.parse(MemorySource.class, id)
        .orElseThrow(() -> ApiException.badRequest("source", "'source' must be encode or event"));
  }

  private static long count(JsonBody body, String field) {
    return body.optionalNumber(field, 0, 1e15)
        .map(n -> {
          if (n != Math.rint(n)) {
            throw ApiException.badRequest(field, "'" + field + "' must be a whole number");
          }
          return n.longValue();
        })
        .orElse(0L);
  }

  /** {@code uses}: {recent: [{kind, at}], olderCount, olderWeight, firstUseAt}, as exported. */
  private static UseHistory uses(ObjectNode node, Instant now) {
    JsonBody uses = JsonBody.received(node)
        .allowOnly(Set.of("recent", "olderCount", "olderWeight", "firstUseAt"));
    JsonNode recent = uses.get("recent");
    if (recent == null
        || !recent.isArray()
        || recent.isEmpty()
        || recent.size() > UseHistory.RECENT) {
      throw ApiException.badRequest(
          "uses.recent",
          "'uses.recent' must list 1 to " + UseHistory.RECENT + " uses, each {kind, at}");
    }
    List<UseHistory.Use> list = new ArrayList<>();
    for (int i = 0; i < recent.size(); i++) {
      String where = "uses.recent[" + i + "]";
      if (!(recent.get(i) instanceof ObjectNode use)) {
        throw ApiException.badRequest(where, "'" + where + "' must be an object {kind, at}");
      }
      JsonBody one = JsonBody.received(use).allowOnly(Set.of("kind", "at"));
      UseKind kind = UseKind.fromId(one.requiredString("kind", 32))
          .orElseThrow(() -> ApiException.badRequest(
              where + ".kind", "'kind' must be encode, reinforce, retrieval or answer"));
      Instant at = one.optionalInstant("at")
          .filter(t -> !t.isAfter(now.plusSeconds(MemoryInput.MAX_FUTURE_SECONDS)))
          .orElseThrow(() -> ApiException.badRequest(
              where + ".at", "'at' must be a time (RFC 3339), not in the future"));
      list.add(new UseHistory.Use(kind, at));
    }
    list.sort(java.util.Comparator.comparing(UseHistory.Use::at));
    long olderCount = uses.optionalNumber("olderCount", 0, 1e15).orElse(0.0).longValue();
    double olderWeight = uses.optionalNumber("olderWeight", 0, 1e15).orElse(0.0);
    Instant first = uses.optionalInstant("firstUseAt").orElse(list.getFirst().at());
    if (first.isAfter(list.getFirst().at())) {
      throw ApiException.badRequest(
          "uses.firstUseAt", "'uses.firstUseAt' must not be later than the first recent use");
    }
    return new UseHistory(list, olderCount, olderWeight, first);
  }

  /**
   * The exported vector, kept when it is this server's model's and was computed from this very
   * text (else null: the model runs again); a vector that is not one is a mistake.
   */
  private static float[] vector(ObjectNode node, String indexedText) {
    JsonBody embedding = JsonBody.received(node).allowOnly(Set.of("model", "textSha256", "vector"));
    String model = embedding.requiredString("model", 200);
    String of = embedding.optionalString("textSha256", 64).orElse(null);
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(embedding.requiredString("vector", 1 << 20));
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(
          "embedding.vector", "'embedding.vector' must be base64 of little-endian float32s");
    }
    if (bytes.length == 0 || bytes.length % Float.BYTES != 0) {
      throw ApiException.badRequest(
          "embedding.vector", "'embedding.vector' must be base64 of little-endian float32s");
    }
    float[] vector = Embedder.fromBytes(bytes);
    if (!model.equals(Embedder.MODEL_ID)
        || vector.length != Embedder.DIMENSIONS
        || !Digests.sha256(indexedText).equals(of)) {
      return null;
    }
    double norm = 0;
    for (float x : vector) {
      if (!Float.isFinite(x)) {
        throw ApiException.badRequest("embedding.vector", "'embedding.vector' holds a non-number");
      }
      norm += (double) x * x;
    }
    if (Math.abs(Math.sqrt(norm) - 1) > 1e-3) {
      return null; // not one of this model's unit vectors: computed again
    }
    return vector;
  }

  /** This line's memory under its final id, with its vector, pointing at what it supersedes. */
  MemoryRecord written(String id, String supersedes, float[] vector) {
    MemoryRecord m = memory;
    Validity v = m.validity();
    return new MemoryRecord(
        id,
        m.orgId(),
        m.agent(),
        m.endUser(),
        m.session(),
        m.text(),
        m.subject(),
        m.kind(),
        m.confidence(),
        m.metadataJson(),
        m.state(),
        m.origin(),
        m.occurredAt(),
        m.createdAt(),
        m.updatedAt(),
        m.uses(),
        m.counts(),
        vector,
        new Validity(v.validFrom(), v.validUntil(), v.expiresAt(), supersedes));
  }
}
