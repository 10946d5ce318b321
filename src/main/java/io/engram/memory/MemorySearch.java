package io.engram.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Searches of the memory index: BM25 over the text and nearest neighbours over the embedding,
 * both within one organization, the agents a caller sees and the caller's filters, and a
 * memory's neighbours in time. Two engines answer them ({@code memory.lucene.LuceneMemorySearch} embedded, the
 * Solr one in {@code io.engram.memory.solr}); both read the same documents and score alike, so
 * retrieval above them is one.
 */
public interface MemorySearch {
  int MAX_QUERY_TERMS = 256;
  /** What a query word that names a subject weighs in BM25 (tuned on LoCoMo, docs/benchmarks.md). */
  float NAME_WEIGHT = (float) RankingWeights.CURRENT.nameWeight();

  /** One search hit: the memory id and the engine's score (BM25, or the vector similarity in [0, 1]). */
  record Hit(String memoryId, float score) {}

  /**
   * A memory near another in time: {@code steps} 1 for the next one on its side, 2 after; {@code
   * after} when it occurred after the other (the side an answer to a question is on).
   */
  record Near(String memoryId, int steps, boolean after) {}

  /**
   * A memory whose neighbours in time are asked for: its id, when it occurred, and whether its
   * writer gave that time ({@code dated}) or it is only when the memory was written.
   */
  record Lender(String id, Instant at, boolean dated) {
    /** A memory is dated when it occurred before it was written (an occurredAt was given). */
    public static Lender of(MemoryRecord memory) {
      return new Lender(
          memory.id(), memory.occurredAt(), memory.occurredAt().isBefore(memory.createdAt()));
    }
  }

  /**
   * What a search may return: the organization, the agents and end users it sees, and the caller's
   * filters ({@code session}: only that session's memories, null for any; {@code metadata}: the
   * conditions on metadata, searched inside the index; {@code holding}: only what held then and has
   * not expired, null for everything).
   */
  record Filter(
      String orgId,
      AgentScope scope,
      String subject,
      Set<MemoryKind> kinds,
      Instant after,
      Instant before,
      String session,
      MetadataFilters metadata,
      Holding holding) {
    public Filter(
        String orgId,
        AgentScope scope,
        String subject,
        Set<MemoryKind> kinds,
        Instant after,
        Instant before) {
      this(orgId, scope, subject, kinds, after, before, null, MetadataFilters.NONE, null);
    }

    /** The same filter over another time range. */
    public Filter between(Instant from, Instant to) {
      return new Filter(orgId, scope, subject, kinds, from, to, session, metadata, holding);
    }
  }

  /**
   * A retrieval's time: only memories that held {@code asOf} and had not expired {@code now}.
   */
  record Holding(Instant asOf, Instant now) {}

  /**
   * The error code of a search the index could not answer (503: a distributed engine away). A chat
   * goes on without memory when retrieval fails with it, and says so in its headers.
   */
  String INDEX_UNAVAILABLE = "memory_index_unavailable";

  /** A search the index could not answer now: 503 {@link #INDEX_UNAVAILABLE}, retry shortly. */
  static io.engram.platform.http.ApiException unavailable() {
    return io.engram.platform.http.ApiException.of(
        503,
        io.engram.platform.http.ErrorType.SERVER_ERROR,
        INDEX_UNAVAILABLE,
        "The memory index cannot be reached; nothing was searched. Try again shortly.",
        2L);
  }

  /** More memories in the lenders' windows than this: each lender is looked up on its own. */
  int NEIGHBOURHOOD = 500;

  /**
   * The best {@code k} lexical (BM25) matches for the query text; with {@code namesLight}, the
   * query's words that name a subject weigh {@link #NAME_WEIGHT} (for a ranking that prefers the
   * subject's memories by itself).
   */
  List<Hit> lexical(String queryText, Filter filter, int k, boolean namesLight);

  /** The {@code k} nearest memories to the (unit-length) query vector. */
  List<Hit> vector(float[] queryVector, Filter filter, int k);

  /**
   * The memories nearest in time to the lender: up to {@code side} just before it and {@code side}
   * just after, within {@code window}, with their distance in steps.
   */
  List<Near> neighbours(Filter filter, Lender lender, int side, Duration window);

  /** The neighbours in time of several memories at once, by the lender's id. */
  Map<String, List<Near>> neighboursOf(
      Filter filter, List<Lender> lenders, int side, Duration window);

  /** Which of {@code ids} the index holds a document of (an erasure's check). */
  Set<String> indexed(Collection<String> ids);

  /**
   * Whether retrieval should send its lexical and vector searches at once: for an engine across
   * the network, where each is mostly waiting; not for the embedded one, where each is CPU.
   */
  default boolean remote() {
    return false;
  }

  /**
   * Up to {@code side} memories on each side of the lender within the window, from memories in
   * time order (those of one instant in write order). {@code found} is where a binary search for
   * the lender put it: its index, or -(insertion point) - 1. An undated lender's own instant is no
   * neighbour: nothing says the memories written with it belong together.
   */
  static <T> List<Near> nearIn(
      List<T> inOrder,
      int found,
      Lender lender,
      int side,
      Duration window,
      java.util.function.ToLongFunction<T> at,
      java.util.function.Function<T, String> id) {
    long t = lender.at().toEpochMilli();
    boolean dated = lender.dated();
    int before = found >= 0 ? found - 1 : -found - 2;
    int after = found >= 0 ? found + 1 : -found - 1;
    List<Near> nearest = new java.util.ArrayList<>(2 * side);
    int steps = 0;
    for (int i = before; i >= 0 && steps < side; i--) {
      long when = at.applyAsLong(inOrder.get(i));
      if (when < t - window.toMillis()) {
        break;
      }
      if (dated || when < t) {
        nearest.add(new Near(id.apply(inOrder.get(i)), ++steps, false));
      }
    }
    steps = 0;
    for (int i = after; i < inOrder.size() && steps < side; i++) {
      long when = at.applyAsLong(inOrder.get(i));
      if (when > t + window.toMillis()) {
        break;
      }
      if (dated || when > t) {
        nearest.add(new Near(id.apply(inOrder.get(i)), ++steps, true));
      }
    }
    return nearest;
  }
}
