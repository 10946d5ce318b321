package io.engram.memory;

import java.time.Instant;

/**
 * One memory as stored: what it says, whose it is (organization, and agent or null for
 * organization-wide), its state, where it came from, and its uses. {@code embedding} is the
 * unit-length MiniLM vector of {@link #indexedText()}, stored so the index can be rebuilt without
 * running the model again.
 */
public record MemoryRecord(
    String id,
    String orgId,
    String agent,
    String text,
    String subject,
    MemoryKind kind,
    double confidence,
    MemoryState state,
    MemorySource source,
    String eventId,
    String metadataJson,
    String credentialId,
    String userId,
    String requestId,
    String idempotencyKey,
    Instant occurredAt,
    Instant createdAt,
    Instant updatedAt,
    UseHistory uses,
    long reinforcementCount,
    long retrievalCount,
    float[] embedding) {

  /** What the lexical and vector indexes see: the subject, then the text. */
  public String indexedText() {
    return indexedText(subject, text);
  }

  static String indexedText(String subject, String text) {
    return subject == null ? text : subject + ": " + text;
  }

  public boolean isRetrievable() {
    return state == MemoryState.DURABLE;
  }
}
