package io.engram.memory;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A validated encode request ({@code occurredAt} is null when not given: the memory is then dated
 * when it is written; {@code session} null when the memory came from no session in particular;
 * the end user is the boundary's, {@link EndUsers}). Every field is bounded; unknown fields are
 * refused, so a typo ({@code memorykind}) is an error rather than a silent default.
 */
public record MemoryInput(
    String text,
    String subject,
    MemoryKind kind,
    double confidence,
    String metadataJson,
    Instant occurredAt,
    String session,
    Validity validity) {
  public static final int MAX_TEXT = 8_000;

  /** The same memory with another text (redacted by a guardrail before it is stored). */
  public MemoryInput withText(String other) {
    return new MemoryInput(
        other, subject, kind, confidence, metadataJson, occurredAt, session, validity);
  }

  public static final int MAX_SUBJECT = 200;
  public static final int MAX_METADATA_BYTES = 8_192;
  public static final double DEFAULT_CONFIDENCE = 1.0;
  /** A memory may be dated a little ahead of this server's clock, not more. */
  public static final long MAX_FUTURE_SECONDS = 300;

  public static final Set<String> FIELDS = Set.of(
      "text",
      "subject",
      "memoryKind",
      "confidence",
      "metadata",
      "occurredAt",
      EndUsers.USER_FIELD,
      EndUsers.SESSION_FIELD,
      "expiresAt",
      "validFrom",
      "validUntil",
      "supersedes");

  public static MemoryInput parse(JsonBody body, Instant now) {
    body.allowOnly(FIELDS);
    String text = body.requiredString("text", MAX_TEXT);
    String subject = body.optionalString("subject", MAX_SUBJECT).orElse(null);
    MemoryKind kind =
        body.optionalString("memoryKind", 64).map(MemoryInput::kind).orElse(MemoryKind.FACT);
    double confidence = body.optionalNumber("confidence", 0, 1).orElse(DEFAULT_CONFIDENCE);
    String metadata = metadata(body);
    Instant occurredAt = body.optionalInstant("occurredAt").orElse(null);
    if (occurredAt != null && occurredAt.isAfter(now.plusSeconds(MAX_FUTURE_SECONDS))) {
      throw ApiException.badRequest("occurredAt", "'occurredAt' must not be in the future");
    }
    return new MemoryInput(
        text,
        subject,
        kind,
        confidence,
        metadata,
        occurredAt,
        EndUsers.session(body),
        validity(body, now));
  }

  /**
   * {@code validFrom}, {@code validUntil} (after it), {@code expiresAt} (not in the past) and
   * {@code supersedes} (a memory id) as one validity.
   */
  static Validity validity(JsonBody body, Instant now) {
    Instant from = body.optionalInstant("validFrom").orElse(null);
    Instant until = body.optionalInstant("validUntil").orElse(null);
    if (from != null && until != null && !until.isAfter(from)) {
      throw ApiException.badRequest("validUntil", "'validUntil' must be later than 'validFrom'");
    }
    Instant expires = body.optionalInstant("expiresAt").orElse(null);
    if (expires != null && !expires.isAfter(now)) {
      throw ApiException.badRequest(
          "expiresAt", "'expiresAt' is in the past: a memory must expire after it is written");
    }
    String supersedes = body.optionalString("supersedes", 64).orElse(null);
    if (supersedes != null && !supersedes.matches("^mem_[a-z0-9]{1,40}$")) {
      throw ApiException.badRequest("supersedes", "'supersedes' must be a memory id (mem_...)");
    }
    return new Validity(from, until, expires, supersedes);
  }

  public static MemoryKind kind(String id) {
    return MemoryKind.fromId(id)
        .orElseThrow(() -> ApiException.badRequest(
            "memoryKind",
            "'memoryKind' must be one of " + MemoryKind.allIds() + ", got '" + id + "'"));
  }

  /** The metadata object as compact JSON, bounded in size; null when absent. */
  static String metadata(JsonBody body) {
    ObjectNode object = metadataObject(body);
    return object == null ? null : Json.write(object);
  }

  /** The metadata object, checked to serialize within {@value #MAX_METADATA_BYTES} bytes; null when absent. */
  static ObjectNode metadataObject(JsonBody body) {
    return body.optionalObject("metadata")
        .map(object -> {
          if (Json.write(object).getBytes(java.nio.charset.StandardCharsets.UTF_8).length
              > MAX_METADATA_BYTES) {
            throw ApiException.badRequest(
                "metadata",
                "'metadata' must serialize to at most " + MAX_METADATA_BYTES + " bytes");
          }
          return object;
        })
        .orElse(null);
  }

  /**
   * The request as a canonical map (defaults filled in): two bodies that mean the same write
   * hash alike for Idempotency-Key, whatever their field order or spacing.
   */
  Map<String, Object> canonical(AgentScope scope) {
    Map<String, Object> canonical = new LinkedHashMap<>();
    canonical.put("agent", scope.agent());
    if (scope.user() != null || session != null) {
      // Only when given: a key's hash from before end users existed still matches.
      canonical.put("userId", scope.user());
      canonical.put("sessionId", session);
    }
    canonical.put("text", text);
    canonical.put("subject", subject);
    canonical.put("memoryKind", kind.id());
    canonical.put("confidence", confidence);
    canonical.put("metadata", metadataJson);
    canonical.put("occurredAt", occurredAt == null ? null : occurredAt.toEpochMilli());
    if (!validity.equals(Validity.NONE)) {
      canonical.put("validity", validity.toString());
    }
    return canonical;
  }
}
