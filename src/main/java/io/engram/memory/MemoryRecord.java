package io.engram.memory;

import io.engram.platform.Digests;
import io.engram.platform.Ids;
import java.time.Instant;

/**
 * One memory as stored: what it says, whose it is (organization, agent or null for
 * organization-wide, end user or null for shared), the session it came from, its state, where it came from, and its uses. {@code embedding} is the
 * unit-length MiniLM vector of {@link #indexedText()}, stored so the index can be rebuilt without
 * running the model again; it is null where a memory is only read, not searched or indexed.
 */
public record MemoryRecord(
    String id,
    String orgId,
    String agent,
    String endUser,
    String session,
    String text,
    String subject,
    MemoryKind kind,
    double confidence,
    String metadataJson,
    MemoryState state,
    Origin origin,
    Instant occurredAt,
    Instant createdAt,
    Instant updatedAt,
    UseHistory uses,
    UseCounts counts,
    float[] embedding,
    Validity validity) {

  /**
   * This state of the memory, for what is kept derived from it (the response cache's answers): when
   * it last changed and a digest of what it says and how it stands, so that two edits within one
   * millisecond still differ. Uses and reinforcements are not part of it.
   */
  public String version() {
    return updatedAt.toEpochMilli()
        + ":"
        + Digests.sha256(String.join(
            "\u0000",
            text,
            String.valueOf(subject),
            String.valueOf(kind),
            Double.toString(confidence),
            String.valueOf(metadataJson),
            String.valueOf(state),
            String.valueOf(validity)));
  }

  /**
   * Where a memory came from: written by a client (with the Idempotency-Key it was sent with, if
   * any) or staged from a developer event, and by whom.
   */
  public record Origin(
      MemorySource source, String eventId, String idempotencyKey, ChangeAuthor author) {

    public static Origin encoded(String idempotencyKey, ChangeAuthor author) {
      return new Origin(MemorySource.ENCODE, null, idempotencyKey, author);
    }

    public static Origin staged(String eventId, ChangeAuthor author) {
      return new Origin(MemorySource.EVENT, eventId, null, author);
    }
  }

  /** How often a memory was reinforced and retrieved, as its views report it. */
  public record UseCounts(long reinforcements, long retrievals) {
    public static final UseCounts NONE = new UseCounts(0, 0);

    public UseCounts plusReinforcement() {
      return new UseCounts(reinforcements + 1, retrievals);
    }

    public UseCounts plusRetrievals(long count) {
      return new UseCounts(reinforcements, retrievals + count);
    }
  }

  /**
   * What a client or an event says a new memory is, before it has an id, a state or a vector.
   */
  public record Draft(
      String orgId,
      String agent,
      String endUser,
      String session,
      String text,
      String subject,
      MemoryKind kind,
      double confidence,
      String metadataJson,
      Validity validity) {

    /** A shared memory (no end user, no session) that always holds. */
    public Draft(
        String orgId,
        String agent,
        String text,
        String subject,
        MemoryKind kind,
        double confidence,
        String metadataJson) {
      this(orgId, agent, null, null, text, subject, kind, confidence, metadataJson, Validity.NONE);
    }

    /** What the embedding is computed from. */
    public String indexedText() {
      return MemoryRecord.indexedText(subject, text);
    }
  }

  /**
   * A memory written now. Its first use is its encoding, at the time it happened (a past
   * {@code occurredAt}) or now, whichever is earlier.
   */
  public static MemoryRecord created(
      Draft draft,
      MemoryState state,
      Origin origin,
      Instant occurredAt,
      Instant now,
      float[] embedding) {
    Instant firstUse = occurredAt.isBefore(now) ? occurredAt : now;
    return new MemoryRecord(
        Ids.newId("mem", now.toEpochMilli()),
        draft.orgId(),
        draft.agent(),
        draft.endUser(),
        draft.session(),
        draft.text(),
        draft.subject(),
        draft.kind(),
        draft.confidence(),
        draft.metadataJson(),
        state,
        origin,
        occurredAt,
        now,
        now,
        UseHistory.first(UseKind.ENCODE, firstUse),
        UseCounts.NONE,
        embedding,
        draft.validity());
  }

  /** This memory saying what the edit says, with the embedding of its (new) indexed text. */
  public MemoryRecord edited(MemoryEdit edit, float[] newEmbedding, Instant at) {
    return new MemoryRecord(
        id,
        orgId,
        agent,
        endUser,
        session,
        edit.text().orElse(text),
        edit.subject().isPresent() ? edit.subject().get().orElse(null) : subject,
        edit.kind().orElse(kind),
        edit.confidence().orElse(confidence),
        edit.metadataJson().isPresent() ? edit.metadataJson().get().orElse(null) : metadataJson,
        state,
        origin,
        occurredAt,
        createdAt,
        at,
        uses,
        counts,
        newEmbedding,
        validity);
  }

  /** This memory with the uses a batch of them wrote. */
  MemoryRecord withUses(MemoryStore.Uses written) {
    return with(written.history(), written.counts(), embedding);
  }

  /** This memory as a guardrail lets it into a chat: its text redacted. */
  public MemoryRecord withText(String redacted) {
    return with(redacted, uses, counts, embedding);
  }

  /** This memory without its vector, for lists held longer than the search that needed it. */
  public MemoryRecord withoutEmbedding() {
    return with(uses, counts, null);
  }

  private MemoryRecord with(UseHistory newUses, UseCounts newCounts, float[] newEmbedding) {
    return with(text, newUses, newCounts, newEmbedding);
  }

  private MemoryRecord with(
      String newText, UseHistory newUses, UseCounts newCounts, float[] newEmbedding) {
    return new MemoryRecord(
        id,
        orgId,
        agent,
        endUser,
        session,
        newText,
        subject,
        kind,
        confidence,
        metadataJson,
        state,
        origin,
        occurredAt,
        createdAt,
        updatedAt,
        newUses,
        newCounts,
        newEmbedding,
        validity);
  }

  /** What the lexical and vector indexes see: the subject, then the text. */
  public String indexedText() {
    return indexedText(subject, text);
  }

  public static String indexedText(String subject, String text) {
    return subject == null ? text : subject + ": " + text;
  }

  public boolean isRetrievable() {
    return state == MemoryState.DURABLE;
  }

  /** Whether retrieval as of {@code asOf}, asked at {@code now}, may return it. */
  public boolean isRetrievable(Instant asOf, Instant now) {
    return isRetrievable() && validity.holdsAt(asOf) && !validity.expiredAt(now);
  }
}
