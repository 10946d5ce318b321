package io.engram.memory.lucene;

import io.engram.memory.ActivationRanker;
import io.engram.memory.MemoryAnalyzer;
import io.engram.memory.MemoryDocument;
import io.engram.memory.MemorySearch;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexOrDocValuesQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.KnnFloatVectorQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermInSetQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.util.BytesRef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link MemorySearch} on the embedded Lucene index: BM25 over the text and nearest neighbours over
 * the embedding, both within one organization, the agents a caller sees and the caller's filters.
 * It reads what {@link LuceneMemoryIndex} last refreshed.
 */
final class LuceneMemorySearch implements MemorySearch {
  private static final Logger LOG = LoggerFactory.getLogger(LuceneMemorySearch.class);

  /** The index's current searchers (replaced when the index reopens after a failure). */
  private final java.util.function.Supplier<SearcherManager> searchers;

  private final Analyzer analyzer;

  LuceneMemorySearch(java.util.function.Supplier<SearcherManager> searchers, Analyzer analyzer) {
    this.searchers = searchers;
    this.analyzer = analyzer;
  }

  /**
   * The best {@code k} lexical (BM25) matches for the query text; with {@code namesLight}, the
   * query's words that name a subject weigh {@link #NAME_WEIGHT} (for a ranking that prefers the
   * subject's memories by itself).
   */
  @Override
  public List<Hit> lexical(String queryText, Filter filter, int k, boolean namesLight) {
    Map<String, Integer> terms = queryTerms(queryText);
    if (terms.isEmpty()) {
      return List.of();
    }
    Set<String> names = namesLight ? namedSubjects(queryText, filter.orgId()) : Set.of();
    BooleanQuery.Builder any = new BooleanQuery.Builder();
    // A word the query repeats weighs as many times, as one clause per occurrence would.
    terms.forEach((term, count) -> any.add(
        new BoostQuery(
            new TermQuery(new Term(MemoryDocument.TEXT, term)),
            count * (names.contains(term) ? NAME_WEIGHT : 1f)),
        BooleanClause.Occur.SHOULD));
    Query query = new BooleanQuery.Builder()
        .add(any.build(), BooleanClause.Occur.MUST)
        .add(filterQuery(filter), BooleanClause.Occur.FILTER)
        .build();
    return search(query, k);
  }

  /**
   * The analyzed terms of the query's words that name a subject of the organization's memories
   * ("Caroline" in "What did Caroline research?"): the ranking prefers memories about that subject
   * already, and in text the name is mostly how others address or mention it.
   */
  private Set<String> namedSubjects(String queryText, String orgId) {
    Set<String> named = new java.util.HashSet<>();
    subjectWords(queryText, orgId).forEach(word -> named.addAll(queryTerms(word).keySet()));
    return named;
  }

  /** The query's words (lower case) that are a subject of the organization's memories. */
  private Set<String> subjectWords(String queryText, String orgId) {
    Set<String> named = new java.util.LinkedHashSet<>();
    String[] words = ActivationRanker.words(queryText).strip().split(" ");
    return withSearcher(searcher -> {
      for (int i = 0; i < Math.min(words.length, MAX_QUERY_TERMS); i++) {
        String word = words[i];
        // Most words are no one's subject: the term lookup spares them the organization's count.
        if (word.length() < 2
            || named.contains(word)
            || searcher.getIndexReader().docFreq(new Term(MemoryDocument.SUBJECT, word)) == 0) {
          continue;
        }
        Query subject = new BooleanQuery.Builder()
            .add(new TermQuery(new Term(MemoryDocument.ORG, orgId)), BooleanClause.Occur.FILTER)
            .add(new TermQuery(new Term(MemoryDocument.SUBJECT, word)), BooleanClause.Occur.FILTER)
            .build();
        if (searcher.count(subject) > 0) {
          named.add(word);
        }
      }
      return named;
    });
  }

  /** The {@code k} nearest memories to the (unit-length) query vector. */
  @Override
  public List<Hit> vector(float[] queryVector, Filter filter, int k) {
    return search(
        new KnnFloatVectorQuery(MemoryDocument.VECTOR, queryVector, k, filterQuery(filter)), k);
  }

  /**
   * The memories nearest in time to the lender: up to {@code side} just before it and {@code side}
   * just after, within {@code window}, with their distance in steps. Memories are in the order they
   * occurred, those of one instant in the order they were written (ids grow with time): a
   * conversation whose client knows only its session's date, and writes its turns in order, has its
   * turns in their order. But when the lender's time is only when it was written (no occurredAt was
   * given: a bulk import of unrelated facts), the memories of its instant are not its neighbours:
   * nothing says they belong together.
   */
  @Override
  public List<Near> neighbours(Filter filter, Lender lender, int side, Duration window) {
    long t = lender.at().toEpochMilli();
    boolean dated = lender.dated();
    List<Near> nearest = new ArrayList<>(2 * side);
    Timed self = dated ? new Timed(t, lender.id()) : null;
    List<String> before =
        inTime(filter, t - window.toMillis(), dated ? t : t - 1, side, true, self);
    for (int i = 0; i < before.size(); i++) {
      nearest.add(new Near(before.get(i), i + 1, false));
    }
    List<String> after =
        inTime(filter, dated ? t : t + 1, t + window.toMillis(), side, false, self);
    for (int i = 0; i < after.size(); i++) {
      nearest.add(new Near(after.get(i), i + 1, true));
    }
    return nearest;
  }

  /** Memories in time order, those of one instant in the order they were written. */
  private static Sort inTimeOrder(boolean latestFirst) {
    return new Sort(
        new SortField(MemoryDocument.OCCURRED_AT, SortField.Type.LONG, latestFirst),
        new SortField(MemoryDocument.ID, SortField.Type.STRING, latestFirst));
  }

  /**
   * The neighbours in time of several memories at once, by the lender's id: what {@link
   * #neighbours} gives each, from one search of all their windows instead of two per memory. When
   * the windows hold more memories than {@link #NEIGHBOURHOOD} (a dense stretch of history), each
   * is looked up on its own, as before.
   */
  @Override
  public Map<String, List<Near>> neighboursOf(
      Filter filter, List<Lender> lenders, int side, Duration window) {
    if (lenders.isEmpty()) {
      return Map.of();
    }
    BooleanQuery.Builder windows = new BooleanQuery.Builder();
    // Each window as the one-hit search reads it (points or doc values): a bare point range would
    // also be cached by the searcher's query cache, a bitset of the whole index per window seen
    // twice (measured: 12 MB of heap at 100,000 memories for windows that rarely recur).
    lenders.stream()
        .map(lender -> lender.at().toEpochMilli())
        .distinct()
        .forEach(t -> windows.add(
            timeRange(t - window.toMillis(), t + window.toMillis()), BooleanClause.Occur.SHOULD));
    Query query = new BooleanQuery.Builder()
        .add(windows.build(), BooleanClause.Occur.FILTER)
        .add(filterQuery(filter), BooleanClause.Occur.FILTER)
        .build();
    return withSearcher(searcher -> {
      List<Timed> around = timed(searcher, query);
      Map<String, List<Near>> neighbours = new LinkedHashMap<>();
      if (around == null) {
        lenders.forEach(
            lender -> neighbours.put(lender.id(), neighbours(filter, lender, side, window)));
        return neighbours;
      }
      lenders.forEach(lender -> neighbours.put(lender.id(), near(around, lender, side, window)));
      return neighbours;
    });
  }

  /** A memory in time: when it occurred and its id (as the index keeps it: read only if chosen). */
  private record Timed(long at, BytesRef id) implements Comparable<Timed> {
    Timed(long at, String id) {
      this(at, new BytesRef(id));
    }

    @Override
    public int compareTo(Timed other) {
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : id.compareTo(other.id);
    }
  }

  /**
   * The query's memories in time order, those of one instant in the order they were written, or
   * null when there are more than {@link #NEIGHBOURHOOD}.
   */
  private static List<Timed> timed(IndexSearcher searcher, Query query) throws IOException {
    TopDocs top = searcher.search(query, NEIGHBOURHOOD + 1, inTimeOrder(false));
    if (top.scoreDocs.length > NEIGHBOURHOOD) {
      return null;
    }
    List<Timed> timed = new ArrayList<>(top.scoreDocs.length);
    for (ScoreDoc doc : top.scoreDocs) {
      Object[] fields = ((FieldDoc) doc).fields;
      timed.add(new Timed((Long) fields[0], (BytesRef) fields[1]));
    }
    return timed;
  }

  /**
   * What {@link #neighbours} gives, from memories in time order: up to {@code side} memories on
   * each side of the lender, within the window.
   */
  private static List<Near> near(List<Timed> inOrder, Lender lender, int side, Duration window) {
    int found = java.util.Collections.binarySearch(
        inOrder, new Timed(lender.at().toEpochMilli(), lender.id()));
    return MemorySearch.nearIn(
        inOrder, found, lender, side, window, Timed::at, timed -> timed.id().utf8ToString());
  }

  /**
   * Memories that occurred in [from, to], by points or doc values, whichever is cheaper: the
   * organization's filter usually leads, and checking its documents' times then beats visiting the
   * whole time tree.
   */
  private static Query timeRange(long from, long to) {
    return new IndexOrDocValuesQuery(
        LongPoint.newRangeQuery(MemoryDocument.OCCURRED_AT, from, to),
        NumericDocValuesField.newSlowRangeQuery(MemoryDocument.OCCURRED_AT, from, to));
  }

  /**
   * The first {@code k} memories that occurred in [from, to] in time order (latest first or
   * earliest first), those of one instant in write order; with {@code past} (a memory), only those
   * past that memory in this order.
   */
  private List<String> inTime(
      Filter filter, long from, long to, int k, boolean latestFirst, Timed past) {
    Query query = new BooleanQuery.Builder()
        .add(timeRange(from, to), BooleanClause.Occur.FILTER)
        .add(filterQuery(filter), BooleanClause.Occur.FILTER)
        .build();
    return search(query, k, inTimeOrder(latestFirst), past).stream()
        .map(Hit::memoryId)
        .toList();
  }

  private Map<String, Integer> queryTerms(String queryText) {
    return MemoryAnalyzer.queryTerms(analyzer, queryText, MAX_QUERY_TERMS);
  }

  private List<Hit> search(Query query, int k) {
    return search(query, k, null, null);
  }

  /**
   * The top {@code k} by score, or in {@code order} when one is given; with {@code past} (a memory,
   * in an order by time and id), only those past it in that order.
   */
  private List<Hit> search(Query query, int k, Sort order, Timed past) {
    return withSearcher(searcher -> {
      TopDocs top;
      if (past != null) {
        // The memory itself is not past this point: the same fields, a document number no larger.
        FieldDoc point = new FieldDoc(
            searcher.getIndexReader().maxDoc() - 1, Float.NaN, new Object[] {past.at(), past.id()});
        top = searcher.searchAfter(point, query, k, order);
      } else {
        top = order == null ? searcher.search(query, k) : searcher.search(query, k, order);
      }
      String[] ids = idsOf(searcher.getIndexReader().leaves(), top.scoreDocs);
      List<Hit> hits = new ArrayList<>(ids.length);
      for (int i = 0; i < ids.length; i++) {
        hits.add(new Hit(ids[i], top.scoreDocs[i].score));
      }
      return hits;
    });
  }

  /** Which of {@code ids} this node's index holds a document of (an erasure's check). */
  @Override
  public java.util.Set<String> indexed(java.util.Collection<String> ids) {
    return withSearcher(searcher -> {
      java.util.Set<String> held = new java.util.HashSet<>();
      for (String id : ids) {
        if (searcher.count(new org.apache.lucene.search.TermQuery(
                new org.apache.lucene.index.Term(MemoryDocument.ID, id)))
            > 0) {
          held.add(id);
        }
      }
      return held;
    });
  }

  /** Work on one searcher of the index, released after it. */
  private interface SearcherWork<T> {
    T on(IndexSearcher searcher) throws IOException;
  }

  /**
   * Runs {@code work} on a searcher of the index as it stands. The index is reopened after a
   * failure (a full disk): a search that took the searchers just before they were closed runs
   * again on the new ones; while the index has none open, or cannot be read, the search is 503
   * {@link MemorySearch#INDEX_UNAVAILABLE} (a chat then goes on without memory and says so).
   */
  private <T> T withSearcher(SearcherWork<T> work) {
    for (int attempt = 0; ; attempt++) {
      SearcherManager manager = searchers.get();
      try {
        IndexSearcher searcher = manager.acquire();
        try {
          return work.on(searcher);
        } finally {
          manager.release(searcher);
        }
      } catch (AlreadyClosedException e) {
        if (attempt >= REOPEN_RETRIES || searchers.get() == manager) {
          throw MemorySearch.unavailable();
        }
      } catch (IOException e) {
        LOG.warn("memory index search failed: {}", e.toString());
        throw MemorySearch.unavailable();
      }
    }
  }

  /** How many times a search follows the index to its newly opened searchers. */
  private static final int REOPEN_RETRIES = 3;

  /**
   * The hits' memory ids, in the hits' order, from the id's doc values (no stored fields read).
   * Read in document order with one doc-values reader per segment: a reader only moves forward, and
   * opening one per hit allocated its term dictionary's buffers every time (about 7.6 MB per chat
   * with memory on: docs/benchmarks.md, issue 43).
   */
  private static String[] idsOf(List<LeafReaderContext> leaves, ScoreDoc[] hits)
      throws IOException {
    Integer[] byDoc = new Integer[hits.length];
    for (int i = 0; i < hits.length; i++) {
      byDoc[i] = i;
    }
    Arrays.sort(byDoc, Comparator.comparingInt(i -> hits[i].doc));
    String[] ids = new String[hits.length];
    LeafReaderContext leaf = null;
    SortedDocValues values = null;
    for (int i : byDoc) {
      int doc = hits[i].doc;
      if (leaf == null || doc >= leaf.docBase + leaf.reader().maxDoc()) {
        leaf = leaves.get(ReaderUtil.subIndex(doc, leaves));
        values = leaf.reader().getSortedDocValues(MemoryDocument.ID);
      }
      if (values == null || !values.advanceExact(doc - leaf.docBase)) {
        throw new IllegalStateException("a memory document without its id");
      }
      ids[i] = values.lookupOrd(values.ordValue()).utf8ToString();
    }
    return ids;
  }

  /**
   * Documents whose {@code field} is {@code shared} or {@code own} (null: only {@code shared}), as
   * a disjunction of two term queries. Not a {@link TermInSetQuery}: that one reads the postings
   * of every term into a bit set up front, and the shared term matches most of an organization (a
   * retrieval for one end user spent more on that set than on its vector search: docs/benchmarks.md,
   * "Retrieval for an end user with a metadata filter"); a disjunction is led by the conjunction's
   * most selective clause.
   */
  private static Query anyOf(String field, String shared, String own) {
    Query common = new TermQuery(new Term(field, shared));
    if (own == null) {
      return common;
    }
    return new BooleanQuery.Builder()
        .add(common, BooleanClause.Occur.SHOULD)
        .add(new TermQuery(new Term(field, own)), BooleanClause.Occur.SHOULD)
        .build();
  }

  private static Query filterQuery(Filter filter) {
    BooleanQuery.Builder query = new BooleanQuery.Builder()
        .add(
            new TermQuery(new Term(MemoryDocument.ORG, filter.orgId())),
            BooleanClause.Occur.FILTER);
    query.add(
        anyOf(
            MemoryDocument.AGENT,
            MemoryDocument.ORGANIZATION_WIDE,
            filter.scope().agent()),
        BooleanClause.Occur.FILTER);
    query.add(
        anyOf(MemoryDocument.END_USER, MemoryDocument.SHARED, filter.scope().user()),
        BooleanClause.Occur.FILTER);
    if (filter.session() != null) {
      query.add(
          new TermQuery(new Term(MemoryDocument.SESSION, filter.session())),
          BooleanClause.Occur.FILTER);
    }
    if (filter.holding() != null) {
      long asOf = filter.holding().asOf().toEpochMilli();
      long now = filter.holding().now().toEpochMilli();
      query.add(
          LongPoint.newRangeQuery(MemoryDocument.VALID_FROM, Long.MIN_VALUE, asOf),
          BooleanClause.Occur.FILTER);
      query.add(
          LongPoint.newRangeQuery(MemoryDocument.VALID_UNTIL, asOf + 1, Long.MAX_VALUE),
          BooleanClause.Occur.FILTER);
      query.add(
          LongPoint.newRangeQuery(MemoryDocument.EXPIRES_AT, now + 1, Long.MAX_VALUE),
          BooleanClause.Occur.FILTER);
    }
    Query metadata = filter.metadata() == null ? null : filter.metadata().query();
    if (metadata != null) {
      query.add(metadata, BooleanClause.Occur.FILTER);
    }
    if (filter.subject() != null) {
      query.add(
          new TermQuery(
              new Term(MemoryDocument.SUBJECT, MemoryDocument.subjectKey(filter.subject()))),
          BooleanClause.Occur.FILTER);
    }
    if (filter.kinds() != null && !filter.kinds().isEmpty()) {
      query.add(
          new TermInSetQuery(
              MemoryDocument.KIND,
              filter.kinds().stream().map(k -> new BytesRef(k.id())).toList()),
          BooleanClause.Occur.FILTER);
    }
    if (filter.after() != null || filter.before() != null) {
      long from = filter.after() == null ? Long.MIN_VALUE : filter.after().toEpochMilli();
      long to = filter.before() == null ? Long.MAX_VALUE : filter.before().toEpochMilli() - 1;
      query.add(
          LongPoint.newRangeQuery(MemoryDocument.OCCURRED_AT, from, to),
          BooleanClause.Occur.FILTER);
    }
    return query.build();
  }
}
