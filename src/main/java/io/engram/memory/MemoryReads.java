package io.engram.memory;

import io.engram.access.Principal;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Memory reads in the caller's boundary: one memory and its provenance, lists, candidates, and
 * retrieval ranked by relevance and activation; and the uses that feed activation (retrieved,
 * injected into a prompt, drawn on by an answer), recorded off the request's path.
 */
public final class MemoryReads implements AutoCloseable {
  private final MemoryStore store;
  private final MemoryHistory history;
  private final EventStore events;
  private final MemoryIndex index;
  private final Embedder embedder;
  private final UseRecorder uses;
  private final Clock clock;

  public MemoryReads(MemoryStores stores, MemoryIndex index, Embedder embedder, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.events = stores.events();
    this.index = index;
    this.embedder = embedder;
    this.uses = new UseRecorder(stores);
    this.clock = clock;
  }

  private static final int MIN_CANDIDATES = 50;

  private static final int MAX_CANDIDATES = 300;

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

  public List<MemoryRecord> candidates(
      Principal caller, AgentScope scope, String after, int limit) {
    return store.candidates(caller.orgId(), scope, after, limit);
  }

  /** A memory the boundary can see, in any state; 404 otherwise (whether it exists elsewhere or not). */
  public MemoryRecord get(Principal caller, AgentScope scope, String memoryId) {
    return store
        .find(caller.orgId(), memoryId)
        .filter(m -> scope.sees(m) || erasedReadWithoutUser(caller, scope, m))
        .orElseThrow(() -> MemoryReads.notFound(memoryId, scope));
  }

  /**
   * An erased end user's memory read by id without naming the user, by a credential bound to no
   * end user: it answers as it does with the user named (its tombstone, which holds nothing of
   * theirs), so whether an id answers 404 or 200 does not depend on guessing the user.
   */
  private static boolean erasedReadWithoutUser(
      Principal caller, AgentScope scope, MemoryRecord memory) {
    return scope.user() == null
        && caller.endUser() == null
        && memory.endUser() != null
        && MemoryStore.ERASED_TEXT.equals(memory.text())
        && new AgentScope(scope.agent(), memory.endUser()).sees(memory);
  }

  public Provenance provenance(Principal caller, AgentScope scope, String memoryId) {
    MemoryRecord memory = get(caller, scope, memoryId);
    String eventId = memory.origin().eventId();
    BusinessEvent event =
        eventId == null ? null : events.find(caller.orgId(), eventId).orElse(null);
    return new Provenance(
        memory,
        event,
        history.transitions(memoryId),
        history.useCount(memoryId, UseKind.ANSWER),
        clock.instant());
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
  public static boolean meets(MetadataFilters filters, MemoryRecord memory) {
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

  /** How many rows a list with metadata filters reads at a time. */
  private static final int LIST_SCAN = 500;

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

  static ApiException notFound(String memoryId, AgentScope scope) {
    return ApiException.notFound("Memory " + memoryId + " not found in " + scope.describe());
  }

  @Override
  public void close() {
    uses.close();
  }
}
