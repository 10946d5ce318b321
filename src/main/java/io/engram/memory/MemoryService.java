package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.organizations.Organization;
import io.engram.platform.Digests;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * Memory operations, each in the caller's boundary ({@link AgentScope}): encode (with
 * Idempotency-Key), event ingestion, the control actions of the state machine, provenance, and
 * retrieval. The database is written first, in one transaction per operation; the index follows.
 */
public final class MemoryService implements AutoCloseable {
  /** How long an Idempotency-Key is remembered after its first use. */
  public static final Duration IDEMPOTENCY_RETENTION = Duration.ofHours(24);

  public static final int MAX_IDEMPOTENCY_KEY = 255;
  private static final int MIN_CANDIDATES = 50;
  private static final int MAX_CANDIDATES = 300;

  private final MemoryStore store;
  private final ChangeLog changeLog;
  private final EventStore events;
  private final IdempotencyKeys idempotencyKeys;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final UseRecorder uses;
  private final StateChanges changes;
  private final Erasures erasures;
  private final Clock clock;

  /**
   * An encode's answer: the memory, the response's JSON, whether it replays an earlier request with
   * the same Idempotency-Key, and whether it is an earlier memory saying the same (reinforced).
   */
  public record Encoded(
      MemoryRecord memory, String responseJson, boolean replayed, boolean deduplicated) {}

  /** An ingested event and the candidates it staged. */
  public record Ingested(BusinessEvent event, List<MemoryRecord> candidates) {}

  /**
   * Why a memory exists: the record, its event (if any), every transition, its uses and how many
   * answers drew on it.
   */
  public record Provenance(
      MemoryRecord memory,
      BusinessEvent event,
      List<Transition> transitions,
      long answers,
      Instant at) {}

  /** A retrieval's results and how it went. */
  public record Retrieval(
      List<ActivationRanker.Ranked> results,
      int lexicalCandidates,
      int vectorCandidates,
      int candidates,
      long embedMicros,
      long searchMicros,
      long rankMicros) {}

  public MemoryService(MemoryStores stores, MemoryIndex index, Embedder embedder, Clock clock) {
    this.store = stores.memories();
    this.changeLog = stores.changeLog();
    this.events = stores.events();
    this.idempotencyKeys = stores.idempotencyKeys();
    this.index = index;
    this.embedder = embedder;
    this.uses = new UseRecorder(store);
    this.changes = new StateChanges(store, changeLog);
    this.erasures = new Erasures(stores, index, clock);
    this.clock = clock;
  }

  public MemoryIndex index() {
    return index;
  }

  /** Erasures of end users' (or one filter's) memories, with their receipts. */
  public Erasures erasures() {
    return erasures;
  }

  /** A boundary's memories out, as JSON Lines. */
  MemoryExport exporter() {
    return new MemoryExport(store);
  }

  /** JSON Lines of memories in, as an export wrote them. */
  MemoryImport importer() {
    return new MemoryImport(store, changeLog, index, embedder, clock);
  }

  /** The changes reflection makes to the organization's memory, through the same state machine. */
  public MemoryMaintenance maintenance() {
    return new MemoryMaintenance(store, index, changes, clock);
  }

  // ---- encode

  public Encoded encode(
      Principal caller,
      AgentScope scope,
      MemoryInput input,
      String idempotencyKey,
      String requestId) {
    Instant now = clock.instant();
    String hash =
        idempotencyKey == null ? null : Digests.sha256(Json.write(input.canonical(scope)));
    if (idempotencyKey != null) {
      Optional<Encoded> replay = replay(caller, idempotencyKey, hash, now);
      if (replay.isPresent()) {
        return replay.get();
      }
    }
    MemoryStore.Settings settings = settings(caller.organization());
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
      Optional<NearTwin> twin =
          nearTwin(caller.orgId(), scope, input, embedding, near.similarity());
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
      store.recordUse(h, memory.id(), UseKind.ENCODE, memory.uses().firstUseAt(), requestId);
      store.recordTransition(
          h,
          new Transition(
              memory.id(),
              null,
              memory.state(),
              "encode",
              encodeReason,
              null,
              caller.credentialId(),
              userId(caller),
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
      makeVisible(memory.validity().supersedes(), replaced[0]);
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
        .orElseThrow(() -> notFound(oldId, scope));
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
    store.recordTransition(
        h,
        new Transition(
            oldId,
            old.state(),
            old.state(),
            "supersede",
            "superseded by " + replacement.id() + " from " + start,
            null,
            caller.credentialId(),
            userId(caller),
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
            new Control(repeat.reason(), null),
            ChangeAuthor.of(caller, requestId),
            now,
            repeat.usedAt() == null ? now : repeat.usedAt(),
            found -> found.filter(m -> scope.owns(m)).orElseThrow(() -> notFound(twinId, scope)));
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
      makeVisible(outcome.after().id(), outcome.change());
    }
    return Optional.of(new Encoded(outcome.after(), response[0], false, true));
  }

  /** A durable memory an encode nearly repeats, and how alike their embeddings are. */
  private record NearTwin(String id, double similarity) {}

  /**
   * The durable memory of the boundary most like {@code embedding} (among the index's nearest),
   * if it is at least {@code similarity} alike, about the same subject (or either has none) and, when
   * the encode names its time, of that time.
   */
  private Optional<NearTwin> nearTwin(
      String orgId, AgentScope scope, MemoryInput input, float[] embedding, double similarity) {
    List<MemorySearch.Hit> nearest;
    try {
      nearest = index
          .search()
          .vector(embedding, new MemorySearch.Filter(orgId, scope, null, null, null, null), 5);
    } catch (ApiException e) {
      if (!MemorySearch.INDEX_UNAVAILABLE.equals(e.code())) {
        throw e;
      }
      // A distributed index away: the write is still kept (the database is the record, and the
      // index takes it once it answers); only the near-duplicate check is skipped. Exact
      // duplicates are still found by their digest, in the database.
      return Optional.empty();
    }
    NearTwin best = null;
    for (MemorySearch.Hit hit : nearest) {
      MemoryRecord m = store.find(orgId, hit.memoryId()).orElse(null);
      if (m == null
          || m.state() != MemoryState.DURABLE
          || !scope.owns(m)
          || !MemoryDigest.sameSubject(input.subject(), m.subject())
          || input.occurredAt() != null
              && input.occurredAt().toEpochMilli() != m.occurredAt().toEpochMilli()) {
        continue;
      }
      double alike = cosine(embedding, m.embedding());
      if (alike >= similarity && (best == null || alike > best.similarity())) {
        best = new NearTwin(m.id(), alike);
      }
    }
    return Optional.ofNullable(best);
  }

  private static double cosine(float[] a, float[] b) {
    if (a == null || b == null || a.length != b.length) {
      return 0;
    }
    double dot = 0;
    double aa = 0;
    double bb = 0;
    for (int i = 0; i < a.length; i++) {
      dot += a[i] * b[i];
      aa += a[i] * a[i];
      bb += b[i] * b[i];
    }
    return aa == 0 || bb == 0 ? 0 : dot / Math.sqrt(aa * bb);
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

  // ---- events

  public Ingested ingest(Principal caller, AgentScope scope, EventInput input, String requestId) {
    Instant now = clock.instant();
    EventPipeline.Plan plan = EventPipeline.plan(
        input.text(), input.metadata(), statement -> store.knows(caller.orgId(), scope, statement));
    List<String> staged = plan.staged();
    List<float[]> vectors = staged.isEmpty()
        ? List.of()
        : embedder.embedAll(staged.stream()
            .map(s -> MemoryRecord.indexedText(input.subject(), s))
            .toList());
    String eventId = Ids.newId("evt", now.toEpochMilli());
    List<MemoryRecord> candidates = new ArrayList<>();
    for (int i = 0; i < staged.size(); i++) {
      MemoryRecord.Draft draft = new MemoryRecord.Draft(
          caller.orgId(),
          scope.agent(),
          scope.user(),
          input.session(),
          staged.get(i),
          input.subject(),
          plan.kind(),
          plan.confidence(),
          null,
          Validity.NONE);
      candidates.add(MemoryRecord.created(
          draft,
          MemoryState.CANDIDATE,
          MemoryRecord.Origin.staged(eventId, ChangeAuthor.of(caller, requestId)),
          now,
          now,
          vectors.get(i)));
    }
    BusinessEvent event = new BusinessEvent(
        eventId,
        caller.orgId(),
        scope.agent(),
        scope.user(),
        input.session(),
        input.type(),
        input.source(),
        input.subject(),
        input.text(),
        input.metadata() == null ? null : Json.write(input.metadata()),
        Json.write(MemoryViews.staging(plan, candidates)),
        caller.credentialId(),
        userId(caller),
        requestId,
        now);
    store.database().write(h -> {
      events.insert(h, event);
      for (MemoryRecord candidate : candidates) {
        store.insert(h, candidate);
        store.recordUse(h, candidate.id(), UseKind.ENCODE, now, requestId);
        store.recordTransition(
            h,
            new Transition(
                candidate.id(),
                null,
                MemoryState.CANDIDATE,
                "stage",
                "staged from event " + eventId + " (" + input.type() + ")",
                input.source(),
                caller.credentialId(),
                userId(caller),
                requestId,
                now));
        changeLog.append(h, candidate.id(), now);
      }
      return null;
    });
    return new Ingested(event, candidates);
  }

  public BusinessEvent event(Principal caller, AgentScope scope, String eventId) {
    return events
        .find(caller.orgId(), eventId)
        .filter(e -> scope.owns(e.agent(), e.endUser()))
        .orElseThrow(
            () -> ApiException.notFound("Event " + eventId + " not found in " + scope.describe()));
  }

  public List<BusinessEvent> events(
      Principal caller, AgentScope scope, String type, String source, String before, int limit) {
    return events.list(caller.orgId(), scope, type, source, before, limit);
  }

  public List<MemoryRecord> candidates(
      Principal caller, AgentScope scope, String after, int limit) {
    return store.candidates(caller.orgId(), scope, after, limit);
  }

  // ---- reads and control

  /** A memory the boundary can see, in any state; 404 otherwise (whether it exists elsewhere or not). */
  public MemoryRecord get(Principal caller, AgentScope scope, String memoryId) {
    return store
        .find(caller.orgId(), memoryId)
        .filter(m -> scope.sees(m))
        .orElseThrow(() -> notFound(memoryId, scope));
  }

  public Provenance provenance(Principal caller, AgentScope scope, String memoryId) {
    MemoryRecord memory = get(caller, scope, memoryId);
    String eventId = memory.origin().eventId();
    BusinessEvent event =
        eventId == null ? null : events.find(caller.orgId(), eventId).orElse(null);
    return new Provenance(
        memory,
        event,
        store.transitions(memoryId),
        store.useCount(memoryId, UseKind.ANSWER),
        clock.instant());
  }

  /** The caller's reason and actor label for a control action; both optional. */
  public record Control(String reason, String actor) {
    public static final Control NONE = new Control(null, null);
  }

  /** Applies a control action of the state machine to a memory the boundary can see. */
  public MemoryRecord act(
      Principal caller,
      AgentScope scope,
      String id,
      MemoryAction action,
      Control control,
      String requestId) {
    StateChanges.Outcome outcome = store
        .database()
        .write(h -> changes.apply(
            h,
            caller.orgId(),
            id,
            action,
            control,
            ChangeAuthor.of(caller, requestId),
            clock.instant(),
            found -> {
              MemoryRecord memory =
                  found.filter(m -> scope.sees(m)).orElseThrow(() -> notFound(id, scope));
              if (action.changesContent() && !scope.owns(memory)) {
                throw ApiException.forbidden(
                    "shared_memory",
                    "Memory " + id + " is organization-wide; only a call at "
                        + "the organization level may " + action.id() + " it");
              }
              return memory;
            }));
    if (outcome.change() != 0) {
      makeVisible(id, outcome.change());
    }
    return outcome.after();
  }

  /**
   * Edits what a memory says (a partial update). Only the boundary that owns it may (an agent
   * cannot rewrite an organization-wide memory); a forgotten memory cannot be edited. A new text
   * or subject is embedded again and the index follows; the edit is a transition in the memory's
   * provenance, with what it said before.
   */
  public MemoryRecord edit(
      Principal caller, AgentScope scope, String id, MemoryEdit edit, String requestId) {
    MemoryRecord current = get(caller, scope, id);
    if (!scope.owns(current)) {
      throw ApiException.forbidden(
          "shared_memory",
          "Memory " + id + " is organization-wide; only a call at the organization level may "
              + "edit it");
    }
    if (current.state() == MemoryState.TOMBSTONED) {
      throw ApiException.conflict(
          "memory_forgotten", "Memory " + id + " was forgotten; write a new one instead");
    }
    Instant now = clock.instant();
    MemoryRecord preview = current.edited(edit, null, now);
    float[] embedding = edit.changesIndexedText()
        ? embedder.embedMemory(preview.indexedText())
        : current.embedding();
    MemoryRecord edited = current.edited(edit, embedding, now);
    long change = store.database().write(h -> {
      MemoryRecord locked = store.findForUpdate(h, caller.orgId(), id).orElseThrow();
      if (!locked.updatedAt().equals(current.updatedAt())) {
        throw ApiException.conflict(
            "concurrent_update", "Memory " + id + " changed while it was edited; read it again");
      }
      store.updateContent(h, edited, now);
      store.recordTransition(
          h,
          new Transition(
              id,
              current.state(),
              current.state(),
              "edit",
              "was: " + abbreviated(current.text()),
              null,
              caller.credentialId(),
              userId(caller),
              requestId,
              now));
      return changeLog.append(h, id, now);
    });
    makeVisible(id, change);
    return edited;
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
        written.add(encode(caller, scope, input, null, requestId).memory());
      }
    }
    return new Extraction(proposals, written, known);
  }

  /** The boundary's memories, newest first, filtered (for listing, not ranking). */
  public List<MemoryRecord> list(
      Principal caller, AgentScope scope, MemoryStore.Filter filter, String before, int limit) {
    if (filter.metadata().isEmpty()) {
      return store.list(caller.orgId(), scope, filter, before, limit);
    }
    // Metadata conditions are tested on each row, reading LIST_SCAN rows at a time from the
    // cursor until the page is full or the boundary has no more: memory stays bounded.
    List<MemoryRecord> page = new ArrayList<>();
    String cursor = before;
    while (page.size() < limit) {
      List<MemoryRecord> rows = store.list(caller.orgId(), scope, filter, cursor, LIST_SCAN);
      for (MemoryRecord row : rows) {
        if (page.size() < limit && meets(filter.metadata(), row)) {
          page.add(row);
        }
      }
      if (rows.size() < LIST_SCAN) {
        break;
      }
      cursor = rows.getLast().id();
    }
    return page;
  }

  /**
   * When the query names a time, the memories nearest the query among those that occurred then
   * join the candidates: what was said that day may be outside the best matches of all time.
   * (Their ranks are not those of the whole search, so they lend nothing to the fusion's ranks.)
   */
  private List<MemorySearch.Hit> inTime(
      MemorySearch.Filter filter, QueryTime.Range time, float[] queryVector) {
    Instant after = later(filter.after(), time.from());
    Instant before = earlier(filter.before(), time.to());
    if (!after.isBefore(before)) {
      return List.of();
    }
    return index.search().vector(queryVector, filter.between(after, before), MIN_CANDIDATES);
  }

  /** Where a remote index's lexical search waits while the vector search is sent beside it. */
  private static final java.util.concurrent.ExecutorService REMOTE_SEARCHES =
      java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

  /** A search sent beside another: its answer, or its own failure (a 503 stays a 503). */
  private static List<MemorySearch.Hit> joined(
      java.util.concurrent.CompletableFuture<List<MemorySearch.Hit>> search) {
    try {
      return search.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** The rows retrieval may return to this boundary (the index is derived: rows decide). */
  private static List<MemoryRecord> retrievable(
      Map<String, MemoryRecord> rows, AgentScope scope, MemorySearch.Filter filter) {
    MemorySearch.Holding holding = filter.holding();
    return rows.values().stream()
        .filter(m -> m.isRetrievable(holding.asOf(), holding.now())
            && scope.sees(m)
            && meets(filter.metadata(), m))
        .toList();
  }

  /** Whether a row's metadata meets the filters (the row, not the index, has the last word). */
  static boolean meets(MetadataFilters filters, MemoryRecord memory) {
    return filters.isEmpty()
        || filters.matches(
            memory.metadataJson() == null
                ? null
                : Json.read(memory.metadataJson(), com.fasterxml.jackson.databind.JsonNode.class));
  }

  private static Instant later(Instant a, Instant b) {
    return a == null || b.isAfter(a) ? b : a;
  }

  private static Instant earlier(Instant a, Instant b) {
    return a == null || b.isBefore(a) ? b : a;
  }

  private static String abbreviated(String text) {
    return text.length() <= 500 ? text : text.substring(0, 500) + "...";
  }

  /**
   * Housekeeping: tombstones memories whose {@code expiresAt} has passed, {@code limit} at a time,
   * each through the state machine with the expiry as its provenance's reason (retrieval already
   * left them out from that moment). Returns how many it tombstoned.
   */
  public int tombstoneExpired(int limit) {
    Instant now = clock.instant();
    int done = 0;
    for (Map<String, Object> row : store.expired(now, limit)) {
      String id = (String) row.get("id");
      Instant expiredAt = Instant.ofEpochMilli(((Number) row.get("expires_at")).longValue());
      try {
        StateChanges.Outcome outcome = store
            .database()
            .write(h -> changes.apply(
                h,
                (String) row.get("org_id"),
                id,
                MemoryAction.DELETE,
                new Control("expired at " + expiredAt, "expiry"),
                new ChangeAuthor(null, null, null),
                now,
                found ->
                    found.orElseThrow(() -> ApiException.notFound("Memory " + id + " not found"))));
        if (outcome.change() != 0) {
          index.sync(id);
          index.applied(outcome.change());
        }
        done++;
      } catch (ApiException e) {
        // Changed meanwhile (tombstoned by someone else): nothing left to do for it.
      }
    }
    if (done > 0) {
      index.refresh();
    }
    return done;
  }

  /** How many rows a list with metadata filters reads at a time. */
  private static final int LIST_SCAN = 500;

  // ---- retrieval

  public Retrieval retrieve(
      Principal caller, AgentScope scope, RetrievalRequest request, String requestId) {
    Instant now = clock.instant();
    long started = System.nanoTime();
    boolean lexical = request.mode() != RetrievalRequest.RankingMode.VECTOR;
    boolean vector = request.mode() != RetrievalRequest.RankingMode.LEXICAL;
    float[] queryVector = vector ? embedder.embed(request.query()) : null;
    long embedded = System.nanoTime();
    Instant asOf = request.asOf() == null ? now : request.asOf();
    MemorySearch.Filter filter = new MemorySearch.Filter(
        caller.orgId(),
        scope,
        request.subject(),
        request.kinds(),
        request.after(),
        request.before(),
        request.session(),
        request.filters(),
        new MemorySearch.Holding(asOf, now));
    int k = Math.min(MAX_CANDIDATES, Math.max(MIN_CANDIDATES, request.limit() * 5));
    boolean hybrid = request.mode() == RetrievalRequest.RankingMode.HYBRID;
    QueryTime.Range time = hybrid ? QueryTime.named(request.query(), now).orElse(null) : null;
    MemorySearch search = index.search();
    String lexicalText = time == null ? request.query() : time.otherWords();
    java.util.concurrent.CompletableFuture<List<MemorySearch.Hit>> lexicalSearch =
        lexical && vector && search.remote()
            ? java.util.concurrent.CompletableFuture.supplyAsync(
                () -> search.lexical(lexicalText, filter, k, hybrid), REMOTE_SEARCHES)
            : null;
    List<MemorySearch.Hit> vectorHits = vector ? search.vector(queryVector, filter, k) : List.of();
    List<MemorySearch.Hit> lexicalHits = lexicalSearch != null
        ? joined(lexicalSearch)
        : lexical ? search.lexical(lexicalText, filter, k, hybrid) : List.of();
    List<MemorySearch.Hit> thenHits = time == null ? List.of() : inTime(filter, time, queryVector);
    long searched = System.nanoTime();
    Set<String> ids = new LinkedHashSet<>();
    lexicalHits.forEach(hit -> ids.add(hit.memoryId()));
    vectorHits.forEach(hit -> ids.add(hit.memoryId()));
    thenHits.forEach(hit -> ids.add(hit.memoryId()));
    Map<String, MemoryRecord> rows = store.findCandidates(caller.orgId(), ids);
    // The index is derived: the database has the last word on state and boundary.
    List<MemoryRecord> candidates = retrievable(rows, scope, filter);
    ActivationRanker ranker = new ActivationRanker(request.mode(), request.useActivation(), time);
    List<ActivationRanker.Ranked> ranked =
        ranker.rank(request.query(), candidates, lexicalHits, vectorHits, queryVector, now);
    if (hybrid) {
      // Context around the best hits: their neighbours in time join the candidates (scored as
      // any candidate is), then may rise by what the hits lend them.
      List<MemorySearch.Lender> lenders = ContextSpread.lenders(ranked).stream()
          .map(hit -> MemorySearch.Lender.of(hit.memory()))
          .toList();
      Map<String, List<MemorySearch.Near>> around =
          index.search().neighboursOf(filter, lenders, ContextSpread.SIDE, ContextSpread.WINDOW);
      Set<String> outside = new LinkedHashSet<>();
      around
          .values()
          .forEach(near -> near.stream()
              .map(MemorySearch.Near::memoryId)
              .filter(id -> !rows.containsKey(id))
              .forEach(outside::add));
      if (!outside.isEmpty()) {
        List<MemoryRecord> more =
            retrievable(store.findCandidates(caller.orgId(), outside), scope, filter);
        ranked = ranker.rankInto(
            ranked, request.query(), more, lexicalHits, vectorHits, queryVector, now);
      }
      ranked = ContextSpread.apply(ranked, around);
    }
    List<ActivationRanker.Ranked> top =
        List.copyOf(ranked.subList(0, Math.min(request.limit(), ranked.size())));
    if (request.recordUse() && !top.isEmpty()) {
      uses.record(
          caller.orgId(),
          top.stream().map(r -> r.memory().id()).toList(),
          UseKind.RETRIEVAL,
          now,
          requestId);
    }
    long rankedAt = System.nanoTime();
    return new Retrieval(
        top,
        lexicalHits.size(),
        vectorHits.size(),
        ids.size(),
        (embedded - started) / 1000,
        (searched - embedded) / 1000,
        (rankedAt - searched) / 1000);
  }

  /**
   * Records that these memories were retrieved for a caller outside retrieval's own response, such
   * as the inference gateway putting them in a prompt (counted, not fed to activation); the ids
   * come from a retrieval in the caller's boundary.
   */
  public void recordUse(Principal caller, List<String> memoryIds, String requestId) {
    if (!memoryIds.isEmpty()) {
      uses.record(caller.orgId(), memoryIds, UseKind.RETRIEVAL, clock.instant(), requestId);
    }
  }

  /**
   * Records the memories an answer drew on ({@link AnswerUse}) among those put in its prompt: a
   * use that feeds their activation. Returns their ids.
   */
  public List<String> recordAnswer(
      Principal caller,
      String question,
      String answer,
      List<AnswerUse.Injected> injected,
      String requestId) {
    List<String> used = AnswerUse.usedBy(answer, question, injected);
    if (!used.isEmpty()) {
      uses.record(caller.orgId(), used, UseKind.ANSWER, clock.instant(), requestId);
    }
    return used;
  }

  /** Writes queued retrieval uses now (tests and shutdown). */
  public void flushUses() {
    uses.flush();
  }

  // ---- settings

  /** The write mode in force: candidate review only where the plan allows it (a downgrade falls back to direct). */
  public WriteMode writeMode(Organization org) {
    return settings(org).writeMode();
  }

  /** The organization's memory settings; below a paid plan encodes write directly whatever it set. */
  public MemoryStore.Settings settings(Organization org) {
    MemoryStore.Settings stored = store.settings(org.id());
    return org.plan().isPaid()
        ? stored
        : new MemoryStore.Settings(WriteMode.DIRECT, stored.nearDuplicates(), stored.ttlByKind());
  }

  /** Sets what the organization's encodes do with near duplicates (its owners and admins). */
  public NearDuplicates setNearDuplicates(Principal caller, NearDuplicates near) {
    requireManager(caller, "what encodes do with near duplicates");
    store.setNearDuplicates(
        caller.orgId(),
        near,
        writeMode(caller.organization()),
        caller.credentialId(),
        clock.instant());
    return near;
  }

  /** Sets the organization's default time to live per memory kind (its owners and admins). */
  public Map<MemoryKind, java.time.Duration> setTtlByKind(
      Principal caller, Map<MemoryKind, java.time.Duration> ttls) {
    requireManager(caller, "how long memories of each kind live");
    store.setTtlByKind(
        caller.orgId(),
        ttls,
        writeMode(caller.organization()),
        caller.credentialId(),
        clock.instant());
    return ttls;
  }

  private static void requireManager(Principal caller, String what) {
    if (!caller.managesOrganization()) {
      throw ApiException.forbidden(
          "insufficient_permissions",
          "Only an organization owner or admin (or an admin API key) may change " + what);
    }
  }

  public WriteMode setWriteMode(Principal caller, WriteMode mode) {
    requireManager(caller, "the memory write mode");
    if (mode == WriteMode.CANDIDATE_REVIEW && !caller.organization().plan().isPaid()) {
      throw ApiException.forbidden(
          "plan_required",
          "The candidate review path needs a paid plan; the "
              + caller.organization().plan().id() + " plan writes memories directly");
    }
    store.setWriteMode(caller.orgId(), mode, caller.credentialId(), clock.instant());
    return mode;
  }

  /**
   * Gives the memories written before deduplication their digest, so an encode finds them too; a
   * thousand at a time until none is left (then it does not look again until the next start).
   */
  public void digestUndigested() {
    while (!allDigested && store.digestUndigested(1_000) > 0) {
      // the next thousand
    }
    allDigested = true;
  }

  private volatile boolean allDigested;

  /** Hourly: forget Idempotency-Keys past their retention. */
  public int purgeExpiredIdempotencyKeys() {
    return idempotencyKeys.purgeExpired(clock.instant());
  }

  /** Brings the index in line with the committed row and makes it searchable before the caller hears back. */
  private void makeVisible(String memoryId, long change) {
    index.sync(memoryId);
    index.refresh();
    index.applied(change);
  }

  private static ApiException notFound(String memoryId, AgentScope scope) {
    return ApiException.notFound("Memory " + memoryId + " not found in " + scope.describe());
  }

  static String userId(Principal caller) {
    return caller.user() == null ? null : caller.user().id();
  }

  /** A developer event as sent; {@code session}: the session it came from, or null. */
  public record EventInput(
      String type,
      String source,
      String subject,
      String text,
      ObjectNode metadata,
      String session) {}

  @Override
  public void close() {
    erasures.close(); // a running erasure stops here; its lease runs out and it is resumed
    uses.close();
    index.close();
  }
}
