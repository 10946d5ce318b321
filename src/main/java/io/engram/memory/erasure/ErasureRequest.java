package io.engram.memory.erasure;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.memory.AgentScope;
import io.engram.memory.EndUsers;
import io.engram.memory.MemoryInput;
import io.engram.memory.MemoryState;
import io.engram.memory.MemoryStore;
import io.engram.memory.MetadataFilters;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;

/**
 * What an erasure takes, besides its boundary (agent, end user): the memories of a session, a
 * subject, a kind, metadata {@code filters}, a time range ({@code occurredAfter} inclusive,
 * {@code occurredBefore} exclusive), in every state; or with {@code everything} all of the
 * boundary's. A request that names nothing to narrow it (no end user either) must say {@code
 * everything: true}: an empty body never forgets an organization.
 *
 * @param selector the conditions as sent (no end user: the boundary holds it), stored with the job
 *     and shown in its receipt
 */
record ErasureRequest(MemoryStore.Filter filter, String reason, ObjectNode selector) {
  static final Set<String> FIELDS = Set.of(
      EndUsers.USER_FIELD,
      EndUsers.SESSION_FIELD,
      "subject",
      "memoryKind",
      MetadataFilters.FIELD,
      "occurredAfter",
      "occurredBefore",
      "everything",
      "reason");

  static ErasureRequest parse(JsonBody body, AgentScope scope) {
    body.allowOnly(FIELDS);
    ObjectNode selector = body.node().deepCopy();
    selector.remove(EndUsers.USER_FIELD);
    String reason = body.optionalString("reason", 1_000).orElse(null);
    selector.remove("reason");
    ErasureRequest request = of(selector, reason);
    boolean everything = body.optionalBoolean("everything").orElse(false);
    boolean narrowed = scope.user() != null || selector.size() > (body.has("everything") ? 1 : 0);
    if (!narrowed && !everything) {
      throw ApiException.badRequest(
          null,
          "Say what to erase: userId, sessionId, subject, memoryKind, filters or a time range"
              + " (occurredAfter, occurredBefore); or everything: true for all of "
              + scope.describe());
    }
    return request;
  }

  /** The request a stored selector describes (a job resumed elsewhere reads it again). */
  static ErasureRequest of(ObjectNode selector, String reason) {
    JsonBody body = JsonBody.of(selector);
    Instant from = body.optionalInstant("occurredAfter").orElse(null);
    Instant until = body.optionalInstant("occurredBefore").orElse(null);
    if (from != null && until != null && !from.isBefore(until)) {
      throw ApiException.badRequest(
          "occurredAfter", "'occurredAfter' must be earlier than 'occurredBefore'");
    }
    MemoryStore.Filter filter = new MemoryStore.Filter(
        EnumSet.allOf(MemoryState.class),
        body.optionalString("memoryKind", 64).map(MemoryInput::kind).orElse(null),
        body.optionalString("subject", MemoryInput.MAX_SUBJECT).orElse(null),
        from,
        until,
        EndUsers.session(body),
        body.has(MetadataFilters.FIELD)
            ? MetadataFilters.parse(body.get(MetadataFilters.FIELD))
            : MetadataFilters.NONE);
    return new ErasureRequest(filter, reason, selector);
  }

  static ErasureRequest stored(String selectorJson, String reason) {
    return of(Json.read(selectorJson, ObjectNode.class), reason);
  }
}
