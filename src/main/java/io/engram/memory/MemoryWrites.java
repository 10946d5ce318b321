package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.access.Principal;
import io.engram.platform.Digests;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * Memory writes in the caller's boundary ({@link AgentScope}): encode (with Idempotency-Key), an
 * exact repeat reinforcing the memory it repeats, a near one merged or staged by the
 * organization's setting, a replacement superseding what it replaces, and extraction from a
 * conversation. The database is written first, in one transaction per write; the index follows.
 */
public final class MemoryWrites {
  private final MemoryStore store;
  private final MemoryHistory history;
  private final MemorySettingsStore settingsStore;
  private final ChangeLog changeLog;
  private final IdempotencyKeys idempotencyKeys;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final StateChanges changes;
  private final NearTwins nearTwins;
  private final Clock clock;

  public MemoryWrites(MemoryStores stores, MemoryIndex index, Embedder embedder, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.settingsStore = stores.settings();
    this.changeLog = stores.changeLog();
    this.idempotencyKeys = stores.idempotencyKeys();
    this.index = index;
    this.embedder = embedder;
    this.changes = new StateChanges(stores);
    this.nearTwins = new NearTwins(store, index);
    this.clock = clock;
  }

  /**
   * What the organization's policies make of a memory's text before it is stored: the text to
   * store (redacted, say), or an exception that refuses the write (the guardrails').
   */
  public interface WriteScreen {
    WriteScreen NONE = (caller, text) -> text;

    String screened(Principal caller, String text);
  }

  private volatile WriteScreen screen = WriteScreen.NONE;

  /** Every write's text goes through {@code screen} first (the organization's guardrails). */
  public void screenWith(WriteScreen screen) {
    this.screen = screen;
  }

  /** A memory's text as the screen lets it be stored (the import's lines pass it too). */
  public String screened(Principal caller, String text) {
    return screen.screened(caller, text);
  }

  /** How long an Idempotency-Key is remembered after its first use. */
  public static final Duration IDEMPOTENCY_RETENTION = Duration.ofHours(24);

  public static final int MAX_IDEMPOTENCY_KEY = 255;

  /**
   * An encode's answer: the memory, the response's JSON, whether it replays an earlier request with
   * the same Idempotency-Key, and whether it is an earlier memory saying the same (reinforced).
   */
  public record Encoded(
      MemoryRecord memory, String responseJson, boolean replayed, boolean deduplicated) {}

  public Encoded encode(
      Principal caller,
      AgentScope scope,
      MemoryInput written,
      String idempotencyKey,
      String requestId) {
    // The organization's guardrails first: a blocked write leaves nothing, a redacted one is
    // stored (and deduplicated, and keyed for idempotency) as redacted.
    MemoryInput input = written.withText(screened(caller, written.text()));
    Instant now = clock.instant();
    String hash =
        idempotencyKey == null ? null : Digests.sha256(Json.write(input.canonical(scope)));
    if (idempotencyKey != null) {
      Optional<Encoded> replay = replay(caller, idempotencyKey, hash, now);
      if (replay.isPresent()) {
        return replay.get();
      }
    }
    MemorySettingsStore.Settings settings =
        settingsStore.settings(caller.orgId()).inForceFor(caller.organization());
    MemoryState direct = settings.writeMode() == WriteMode.CANDIDATE_REVIEW
        ? MemoryState.CANDIDATE
        : MemoryState.DURABLE;
    Validity validity = input.validity();
    if (validity.expiresAt() == null) {
      Instant expires = settings.defaultExpiry(input.kind(), now);
      if (expires != null) {
        validity = new Validity(
            validity.validFrom(), validity.validUntil(), expires, validity.supersedes());
      }
    }
    boolean replaces = validity.supersedes() != null;
    if (replaces && direct != MemoryState.DURABLE) {
      // A candidate is not true yet: closing what it replaces now would leave nothing true.
      throw ApiException.conflict(
          "supersedes_needs_direct_write",
          "'supersedes' needs the direct write mode: in candidate review a replacement would"
              + " close the memory it replaces before anyone approved it");
    }
    if (replaces) {
      // A replacement holds from its own start: given, else when it happened, else now.
      Instant start = validity.validFrom() != null
          ? validity.validFrom()
          : input.occurredAt() != null ? input.occurredAt() : now;
      validity =
          new Validity(start, validity.validUntil(), validity.expiresAt(), validity.supersedes());
    }
    // A replacement is meant: it is never folded into the memory it may repeat.
    if (direct == MemoryState.DURABLE && !replaces) {
      Optional<String> twin = store
          .database()
          .read(h -> store.durableTwin(
              h,
              caller.orgId(),
              scope,
              MemoryDigest.of(input.text()),
              input.subject(),
              input.occurredAt()));
      if (twin.isPresent()) {
        Optional<Encoded> reinforced = reinforceInstead(
            caller,
            scope,
            new Repeat(twin.get(), REPEATED, input.occurredAt()),
            idempotencyKey,
            hash,
            requestId);
        if (reinforced.isPresent()) {
          return reinforced.get();
        }
      }
    }
    Instant occurredAt = input.occurredAt() == null ? now : input.occurredAt();
    MemoryRecord.Draft draft = new MemoryRecord.Draft(
        caller.orgId(),
        scope.agent(),
        scope.user(),
        input.session(),
        input.text(),
        input.subject(),
        input.kind(),
        input.confidence(),
        input.metadataJson(),
        validity);
    float[] embedding = embedder.embedMemory(draft.indexedText());
    MemoryState state = direct;
    String reason = null;
    NearDuplicates near = settings.nearDuplicates();
    if (direct == MemoryState.DURABLE && !replaces && near.action() != NearDuplicates.Action.KEEP) {
      Optional<NearTwins.NearTwin> twin =
          nearTwins.find(caller.orgId(), scope, input, embedding, near.similarity());
      if (twin.isPresent()) {
        String why = String.format(
            java.util.Locale.ROOT,
            "a near duplicate of %s (similarity %.3f)",
            twin.get().id(),
            twin.get().similarity());
        if (near.action() == NearDuplicates.Action.MERGE) {
          Optional<Encoded> reinforced = reinforceInstead(
              caller,
              scope,
              new Repeat(
                  twin.get().id(), why + " was encoded: " + input.text(), input.occurredAt()),
              idempotencyKey,
              hash,
              requestId);
          if (reinforced.isPresent()) {
            return reinforced.get();
          }
        } else {
          state = MemoryState.CANDIDATE; // staged for review beside the memory it nearly repeats
          reason = why;
        }
      }
    }
    String encodeReason = reason;
    MemoryRecord memory = MemoryRecord.created(
        draft,
        state,
        MemoryRecord.Origin.encoded(idempotencyKey, ChangeAuthor.of(caller, requestId)),
        occurredAt,
        now,
        embedding);
    String response = Json.write(MemoryViews.memory(memory));
    long[] replaced = {0};
    Long change = store.database().write(h -> {
      if (!claimed(h, caller, idempotencyKey, hash, memory.id(), response, now)) {
        return null;
      }
      if (replaces) {
        replaced[0] = supersede(h, caller, scope, memory, requestId, now);
      }
      store.insert(h, memory);
      history.recordUse(h, memory.id(), UseKind.ENCODE, memory.uses().firstUseAt(), requestId);
      history.recordTransition(
          h,
          new Transition(
              memory.id(),
              null,
              memory.state(),
              "encode",
              encodeReason,
              null,
              caller.credentialId(),
              ChangeAuthor.userId(caller),
              requestId,
              now));
      return changeLog.append(h, memory.id(), now);
    });
    if (change == null) {
      // A racing retry with the same key committed first: answer as it did.
      return replay(caller, idempotencyKey, hash, now)
          .orElseThrow(() -> ApiException.conflict(
              "idempotency_key_in_use",
              "Another request with this Idempotency-Key is in progress; retry it"));
    }
    if (replaced[0] != 0) {
      index.makeVisible(memory.validity().supersedes(), replaced[0]);
    }
    if (state == MemoryState.DURABLE) {
      index.added(memory);
      index.refresh();
      index.applied(change);
    }
    return new Encoded(memory, response, false, false);
  }

  /**
   * Closes the validity of the memory {@code replacement} supersedes at the replacement's start, in
   * the encode's transaction (both or neither): it stays true for the past, and "as of" a time
   * before the start still finds it. The replaced memory must be the boundary's own (else 404),
   * not tombstoned, and start before the replacement. Returns its change log entry.
   */
  private long supersede(
      Handle h,
      Principal caller,
      AgentScope scope,
      MemoryRecord replacement,
      String requestId,
      Instant now) {
    String oldId = replacement.validity().supersedes();
    Instant start = replacement.validity().validFrom();
    MemoryRecord old = store
        .findForUpdate(h, caller.orgId(), oldId)
        .filter(scope::owns)
        .orElseThrow(() -> MemoryReads.notFound(oldId, scope));
    if (old.state() == MemoryState.TOMBSTONED) {
      throw ApiException.conflict(
          "memory_tombstoned", "Memory " + oldId + " is tombstoned: there is nothing to supersede");
    }
    if (old.validity().validFrom() != null && !start.isAfter(old.validity().validFrom())) {
      throw ApiException.badRequest(
          "validFrom",
          "A replacement must start after the memory it supersedes (" + oldId + " holds from "
              + old.validity().validFrom() + ")");
    }
    store.closeValidity(h, oldId, start, now);
    history.recordTransition(
        h,
        new Transition(
            oldId,
            old.state(),
            old.state(),
            "supersede",
            "superseded by " + replacement.id() + " from " + start,
            null,
            caller.credentialId(),
            ChangeAuthor.userId(caller),
            requestId,
            now));
    return changeLog.append(h, oldId, now);
  }

  /**
   * An encode that repeats a durable memory: which one, why (its provenance's reason), and when the
   * encode says it happened (null: it did not say; the reinforcement counts now).
   */
  private record Repeat(String memoryId, String reason, Instant usedAt) {}

  /** Why an encode of what a memory already says reinforced it (its provenance's reason). */
  private static final String REPEATED = "encoded again: the same text, about the same subject";

  /**
   * An encode of what a durable memory of the boundary already says (the same text, normalized,
   * about the same subject or with one of them not given; at the same time when the encode names
   * one), or nearly says when the organization merges near duplicates, reinforces that memory
   * ({@code reason} in its provenance) and answers with it, marked {@code deduplicated}: not a
   * second copy gathering its own uses. Empty when the memory stopped being durable meanwhile: the
   * encode writes a new one.
   */
  private Optional<Encoded> reinforceInstead(
      Principal caller,
      AgentScope scope,
      Repeat repeat,
      String idempotencyKey,
      String hash,
      String requestId) {
    String twinId = repeat.memoryId();
    Instant now = clock.instant();
    String[] response = new String[1];
    StateChanges.Outcome outcome;
    try {
      // The reinforcement and the Idempotency-Key's claim commit together: a retry that lost the
      // race reinforces nothing and answers as the first did.
      outcome = store.database().write(h -> {
        StateChanges.Outcome reinforced = changes.apply(
            h,
            caller.orgId(),
            twinId,
            MemoryAction.REINFORCE,
            new MemoryControl.Control(repeat.reason(), null),
            ChangeAuthor.of(caller, requestId),
            now,
            repeat.usedAt() == null ? now : repeat.usedAt(),
            found -> found
                .filter(m -> scope.owns(m))
                .orElseThrow(() -> MemoryReads.notFound(twinId, scope)));
        java.util.Map<String, Object> view =
            new java.util.LinkedHashMap<>(MemoryViews.memory(reinforced.after()));
        view.put("deduplicated", true);
        response[0] = Json.write(view);
        if (!claimed(h, caller, idempotencyKey, hash, reinforced.after().id(), response[0], now)) {
          throw new KeyTakenMeanwhile();
        }
        return reinforced;
      });
    } catch (KeyTakenMeanwhile e) {
      return replay(caller, idempotencyKey, hash, now);
    } catch (ApiException changedMeanwhile) {
      return Optional.empty(); // no longer durable (suppressed, forgotten): a new memory it is
    }
    if (outcome.change() != 0) {
      index.makeVisible(outcome.after().id(), outcome.change());
    }
    return Optional.of(new Encoded(outcome.after(), response[0], false, true));
  }

  /**
   * Claims the request's Idempotency-Key for its answer, in the write's transaction; true when it
   * has none or the claim is this request's, false when a racing retry claimed it first.
   */
  private boolean claimed(
      Handle h,
      Principal caller,
      String idempotencyKey,
      String hash,
      String memoryId,
      String response,
      Instant now) {
    return idempotencyKey == null
        || idempotencyKeys.claim(
            h,
            caller.orgId(),
            caller.credentialId(),
            idempotencyKey,
            hash,
            memoryId,
            response,
            now,
            now.plus(IDEMPOTENCY_RETENTION));
  }

  /** A racing request with the same Idempotency-Key committed first: this one is rolled back. */
  private static final class KeyTakenMeanwhile extends RuntimeException {
    KeyTakenMeanwhile() {
      super(null, null, false, false);
    }
  }

  private Optional<Encoded> replay(Principal caller, String key, String hash, Instant now) {
    return idempotencyKeys.find(caller.orgId(), caller.credentialId(), key, now).map(write -> {
      if (!write.requestHash().equals(hash)) {
        throw ApiException.conflict(
            "idempotency_key_reused",
            "Idempotency-Key",
            "This Idempotency-Key was already "
                + "used with a different request body; use a new key for a new memory");
      }
      MemoryRecord memory = store.find(caller.orgId(), write.memoryId()).orElseThrow();
      boolean deduplicated =
          Json.read(write.response(), JsonNode.class).path("deduplicated").asBoolean(false);
      return new Encoded(memory, write.response(), true, deduplicated);
    });
  }

  /** Checks an Idempotency-Key header: 1 to 255 visible ASCII characters. */
  public static String idempotencyKey(String header) {
    if (header == null) {
      return null;
    }
    if (header.isEmpty()
        || header.length() > MAX_IDEMPOTENCY_KEY
        || !header.chars().allMatch(c -> c >= 0x21 && c <= 0x7e)) {
      throw ApiException.badRequest(
          "Idempotency-Key",
          "Idempotency-Key must be 1 to " + MAX_IDEMPOTENCY_KEY
              + " visible ASCII characters (a UUID is a good choice)");
    }
    return header;
  }

  /** What a conversation yielded: the memories written (or, on a dry run, proposed) and skipped. */
  public record Extraction(
      List<ConversationExtractor.Proposal> proposals,
      List<MemoryRecord> written,
      List<ConversationExtractor.Proposal> known) {}

  /**
   * Finds what is worth remembering in a conversation ({@link ConversationExtractor}) and, unless
   * it is a dry run, writes each new statement as a memory of the boundary, by the organization's
   * write mode (durable, or a candidate to review), for the boundary's end user and from {@code
   * session} (null: none). A statement the boundary already holds is skipped, not written twice.
   */
  public Extraction extract(
      Principal caller,
      AgentScope scope,
      List<String> roles,
      List<String> contents,
      String session,
      boolean dryRun,
      String requestId) {
    List<ConversationExtractor.Proposal> proposals = ConversationExtractor.extract(roles, contents);
    List<ConversationExtractor.Proposal> known = new ArrayList<>();
    List<MemoryRecord> written = new ArrayList<>();
    for (ConversationExtractor.Proposal proposal : proposals) {
      if (store.knows(caller.orgId(), scope, proposal.text())) {
        known.add(proposal);
      } else if (!dryRun) {
        MemoryInput input = new MemoryInput(
            proposal.text(),
            null,
            proposal.kind(),
            ConversationExtractor.CONFIDENCE,
            Json.write(
                java.util.Map.of("extractedFrom", "conversation", "message", proposal.message())),
            null,
            session,
            Validity.NONE);
        try {
          written.add(encode(caller, scope, input, null, requestId).memory());
        } catch (ApiException refused) {
          // A proposal a guardrail blocks is not stored; the others are, so an extraction never
          // ends half written with an error.
          if (!"guardrail_blocked".equals(refused.code())) {
            throw refused;
          }
        }
      }
    }
    return new Extraction(proposals, written, known);
  }
}
