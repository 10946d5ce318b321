package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.ActivationRanker;
import io.engram.memory.MemoryAnalyzer;
import io.engram.memory.MemorySearch;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.lucene.analysis.Analyzer;

/**
 * {@link MemorySearch} on the Solr collection: the embedded index's searches as Solr requests,
 * each routed to the organization's shard ({@code _route_}) with the filter as filter queries (the
 * knn query's pre-filter too). The text query is the analyzed terms with the same boosts, scored
 * by the same BM25; the vector score is the same (1 + dot) / 2.
 */
final class SolrMemorySearch implements MemorySearch {
  /** The error code of a memory route while the engine cannot be reached (503). */
  static final String UNAVAILABLE = MemorySearch.INDEX_UNAVAILABLE;

  private final SolrConnection solr;
  private final Supplier<String> collection;
  private final Analyzer analyzer;

  /**
   * The collection's shards as last seen ({@link SolrMemoryIndex#checkShards}), or null: then (and
   * when the shard's cores do not answer) a search goes through the collection, which forwards it.
   */
  private volatile SolrShards routes;

  /** Searches sent to a core of the organization's shard, and through the collection. */
  final AtomicLong toShard = new AtomicLong();

  final AtomicLong throughCollection = new AtomicLong();

  SolrMemorySearch(SolrConnection solr, Supplier<String> collection, Analyzer analyzer) {
    this.solr = solr;
    this.collection = collection;
    this.analyzer = analyzer;
  }

  @Override
  public List<Hit> lexical(String queryText, Filter filter, int k, boolean namesLight) {
    Map<String, Integer> terms = MemoryAnalyzer.queryTerms(analyzer, queryText, MAX_QUERY_TERMS);
    if (terms.isEmpty()) {
      return List.of();
    }
    Set<String> names = namesLight ? namedSubjects(queryText, filter.orgId()) : Set.of();
    String query = terms.entrySet().stream()
        .map(term -> SolrQueries.term(SolrDocuments.TEXT, term.getKey()) + "^"
            + term.getValue() * (names.contains(term.getKey()) ? NAME_WEIGHT : 1f))
        .collect(Collectors.joining(" "));
    return hits(select(query, filter, k, null));
  }

  /** The analyzed terms of the query's words that name a subject of the organization's memories. */
  private Set<String> namedSubjects(String queryText, String orgId) {
    Set<String> words = new LinkedHashSet<>();
    for (String word : ActivationRanker.words(queryText).strip().split(" ")) {
      if (word.length() >= 2 && words.size() < MAX_QUERY_TERMS) {
        words.add(word);
      }
    }
    if (words.isEmpty()) {
      return Set.of();
    }
    // One request for all the words: which of them are a subject here (a facet of the subjects
    // among them), where the embedded index asks the term dictionary word by word.
    Map<String, Object> body = new LinkedHashMap<>();
    body.put(
        "query",
        words.stream()
            .map(word -> SolrQueries.term(SolrDocuments.SUBJECT, word))
            .collect(Collectors.joining(" OR ")));
    body.put("filter", List.of(SolrQueries.term(SolrDocuments.ORG, orgId)));
    body.put("limit", 0);
    body.put(
        "facet",
        Map.of(
            "subjects",
            Map.of("type", "terms", "field", SolrDocuments.SUBJECT, "limit", MAX_QUERY_TERMS)));
    JsonNode answer = search(orgId, body, new LinkedHashMap<>(Map.of("q.op", "OR")));
    Set<String> named = new HashSet<>();
    for (JsonNode bucket : answer.path("facets").path("subjects").path("buckets")) {
      String subject = bucket.path("val").asText();
      if (words.contains(subject)) {
        named.addAll(
            MemoryAnalyzer.queryTerms(analyzer, subject, MAX_QUERY_TERMS).keySet());
      }
    }
    return named;
  }

  @Override
  public boolean remote() {
    return true;
  }

  @Override
  public List<Hit> vector(float[] queryVector, Filter filter, int k) {
    StringBuilder vector = new StringBuilder(queryVector.length * 12).append('[');
    for (int i = 0; i < queryVector.length; i++) {
      vector.append(i == 0 ? "" : ",").append(queryVector[i]);
    }
    vector.append(']');
    return hits(
        select("{!knn f=" + SolrDocuments.VECTOR + " topK=" + k + "}" + vector, filter, k, null));
  }

  /** A memory in time, as a search sorted by time returns it. */
  private record Timed(long at, String id) implements Comparable<Timed> {
    @Override
    public int compareTo(Timed other) {
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : id.compareTo(other.id);
    }
  }

  @Override
  public List<Near> neighbours(Filter filter, Lender lender, int side, Duration window) {
    Map<String, List<Near>> one = neighboursOf(filter, List.of(lender), side, window);
    return one.getOrDefault(lender.id(), List.of());
  }

  @Override
  public Map<String, List<Near>> neighboursOf(
      Filter filter, List<Lender> lenders, int side, Duration window) {
    Map<String, List<Near>> neighbours = new LinkedHashMap<>();
    if (lenders.isEmpty()) {
      return neighbours;
    }
    String windows = lenders.stream()
        .map(lender -> lender.at().toEpochMilli())
        .distinct()
        .map(t -> SolrDocuments.OCCURRED_AT + ":[" + (t - window.toMillis()) + " TO "
            + (t + window.toMillis()) + "]")
        .collect(Collectors.joining(" OR "));
    List<Timed> around = timed(windows, filter, NEIGHBOURHOOD + 1);
    if (around.size() <= NEIGHBOURHOOD) {
      lenders.forEach(lender -> neighbours.put(lender.id(), near(around, lender, side, window)));
      return neighbours;
    }
    // A dense stretch of history: each lender's own window, as many as each side needs.
    for (Lender lender : lenders) {
      long t = lender.at().toEpochMilli();
      String own = SolrDocuments.OCCURRED_AT + ":[" + (t - window.toMillis()) + " TO "
          + (t + window.toMillis()) + "]";
      List<Timed> before = timedSide(own, filter, lender, side, false);
      List<Timed> after = timedSide(own, filter, lender, side, true);
      List<Timed> both = new ArrayList<>(before);
      both.addAll(after);
      both.sort(null);
      neighbours.put(lender.id(), near(both, lender, side, window));
    }
    return neighbours;
  }

  /** Up to {@code side} memories of the window on one side of the lender, nearest first. */
  private List<Timed> timedSide(
      String window, Filter filter, Lender lender, int side, boolean after) {
    long t = lender.at().toEpochMilli();
    String id = SolrQueries.escape(lender.id());
    String past = after
        ? SolrDocuments.OCCURRED_AT + ":{" + t + " TO *] OR (" + SolrDocuments.OCCURRED_AT + ":" + t
            + " AND " + SolrDocuments.MEMORY_ID + ":{" + id + " TO *])"
        : SolrDocuments.OCCURRED_AT + ":[* TO " + t + "} OR (" + SolrDocuments.OCCURRED_AT + ":" + t
            + " AND " + SolrDocuments.MEMORY_ID + ":[* TO " + id + "})";
    String order = after ? "asc" : "desc";
    Map<String, Object> params = new LinkedHashMap<>();
    params.put(
        "sort",
        SolrDocuments.OCCURRED_AT + " " + order + "," + SolrDocuments.MEMORY_ID + " " + order);
    JsonNode answer = select("(" + window + ") AND (" + past + ")", filter, side * 2, params);
    return timedOf(answer);
  }

  private List<Timed> timed(String query, Filter filter, int rows) {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("sort", SolrDocuments.OCCURRED_AT + " asc," + SolrDocuments.MEMORY_ID + " asc");
    return timedOf(select(query, filter, rows, params));
  }

  private static List<Timed> timedOf(JsonNode answer) {
    List<Timed> timed = new ArrayList<>();
    for (JsonNode doc : answer.path("response").path("docs")) {
      timed.add(new Timed(
          doc.path(SolrDocuments.OCCURRED_AT).asLong(),
          doc.path(SolrDocuments.MEMORY_ID).asText()));
    }
    return timed;
  }

  /**
   * What {@link #neighbours} gives, from memories in time order: up to {@code side} memories on
   * each side of the lender within the window (an undated lender's own instant is no neighbour:
   * nothing says the memories written with it belong together).
   */
  private static List<Near> near(List<Timed> inOrder, Lender lender, int side, Duration window) {
    int found = java.util.Collections.binarySearch(
        inOrder, new Timed(lender.at().toEpochMilli(), lender.id()));
    return MemorySearch.nearIn(inOrder, found, lender, side, window, Timed::at, Timed::id);
  }

  @Override
  public Set<String> indexed(Collection<String> ids) {
    Set<String> held = new HashSet<>();
    List<String> all = List.copyOf(ids);
    for (int from = 0; from < all.size(); from += 500) {
      List<String> chunk = all.subList(from, Math.min(all.size(), from + 500));
      JsonNode answer = post(SolrQueries.byMemoryIds(chunk, SolrDocuments.MEMORY_ID));
      answer
          .path("response")
          .path("docs")
          .forEach(doc -> held.add(doc.path(SolrDocuments.MEMORY_ID).asText()));
    }
    return held;
  }

  /** One search of the organization's shard: the query, the filter's filter queries, k rows. */
  private JsonNode select(String query, Filter filter, int k, Map<String, Object> more) {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("q.op", "OR");
    if (more != null) {
      params.putAll(more);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("query", query);
    body.put("filter", SolrQueries.filters(filter));
    body.put("limit", k);
    body.put("fields", SolrDocuments.MEMORY_ID + "," + SolrDocuments.OCCURRED_AT + ",score");
    return search(filter.orgId(), body, params);
  }

  /** Where searches go from now on: the shards of the collection as the last look saw them. */
  void routeBy(SolrShards shards) {
    routes = shards;
  }

  /**
   * One organization's search: to a core of its shard, which answers alone ({@code distrib=false}:
   * no node in between forwarding it), when the shards are known and a core answers; otherwise
   * through the collection, routed to the shard.
   */
  private JsonNode search(String orgId, Map<String, Object> body, Map<String, Object> params) {
    SolrShards shards = routes;
    List<URI> cores = shards == null ? List.of() : shards.coresOf(orgId);
    if (!cores.isEmpty()) {
      Map<String, Object> alone = new LinkedHashMap<>(params);
      alone.put("distrib", "false");
      body.put("params", alone);
      try {
        JsonNode answer = solr.postJsonAt(cores, "select", Map.of(), body);
        toShard.incrementAndGet();
        return answer;
      } catch (SolrConnection.Unavailable | SolrConnection.Refused e) {
        // The shards moved since the last look (a core gone, a reindex's collection deleted):
        // through the collection until the next look.
        if (e instanceof SolrConnection.Refused refused && refused.status != 404) {
          throw refused;
        }
        routes = null;
      }
    }
    Map<String, Object> routed = new LinkedHashMap<>(params);
    routed.put("_route_", SolrDocuments.route(orgId));
    // One shard answers: its ids, times and scores come back in one pass, not a second request
    // for the fields; and a replica on the node asked is preferred to one across the network.
    routed.put("distrib.singlePass", "true");
    routed.put("shards.preference", "replica.location:local");
    body.put("params", routed);
    JsonNode answer = post(body);
    throughCollection.incrementAndGet();
    return answer;
  }

  /**
   * A search request; Solr away is the memory's 503 (the caller may retry; a chat goes on without
   * memory), never a 500.
   */
  private JsonNode post(Map<String, Object> body) {
    try {
      return solr.postJson(collection.get() + "/select", Map.of(), body);
    } catch (SolrConnection.Unavailable e) {
      throw MemorySearch.unavailable();
    } catch (SolrConnection.Refused e) {
      // No collection behind the alias yet (Solr was away when this node started, and the
      // recovery that creates it has not run): the index is not there, which is a 503 too.
      if (e.status == 404) {
        throw MemorySearch.unavailable();
      }
      throw e;
    }
  }

  private static List<Hit> hits(JsonNode answer) {
    List<Hit> hits = new ArrayList<>();
    for (JsonNode doc : answer.path("response").path("docs")) {
      hits.add(new Hit(
          doc.path(SolrDocuments.MEMORY_ID).asText(), (float) doc.path("score").asDouble()));
    }
    return hits;
  }
}
