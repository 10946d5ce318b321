package io.engram.platform.config;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Which engine holds the memory index ({@code ENGRAM_MEMORY_INDEX}): {@code lucene}, embedded on
 * each node (the default), or {@code solr}, one SolrCloud collection shared by every node and
 * sharded by organization, with its nodes, credentials, alias, shards and replicas.
 */
public record MemoryIndexSettings(
    String engine,
    List<URI> solrNodes,
    String solrCollection,
    int solrShards,
    int solrReplicas,
    String solrUsername,
    String solrPassword,
    Duration solrTimeout) {

  /**
   * A retrieval's Solr requests one after another, at most: the subject lookup and the text
   * search, a time-bounded vector search, the neighbours in time.
   */
  static final int SEARCHES_PER_RETRIEVAL = 4;

  public boolean solr() {
    return engine.equals("solr");
  }

  @Override
  public String toString() {
    return "MemoryIndexSettings[engine=" + engine + ", solr=" + solrNodes + ", collection="
        + solrCollection + ", password=" + (solrPassword.isEmpty() ? "" : "<set>") + "]";
  }

  static MemoryIndexSettings of(Map<String, String> values) {
    return new MemoryIndexSettings(
        values.getOrDefault("ENGRAM_MEMORY_INDEX", "lucene"),
        nodes(values.getOrDefault("ENGRAM_SOLR_URL", "")),
        values.getOrDefault("ENGRAM_SOLR_COLLECTION", "engram-memory"),
        Integer.parseInt(values.getOrDefault("ENGRAM_SOLR_SHARDS", "2")),
        Integer.parseInt(values.getOrDefault("ENGRAM_SOLR_REPLICAS", "2")),
        values.getOrDefault("ENGRAM_SOLR_USERNAME", ""),
        values.getOrDefault("ENGRAM_SOLR_PASSWORD", ""),
        Duration.ofMillis(Long.parseLong(values.getOrDefault("ENGRAM_SOLR_TIMEOUT_MS", "5000"))));
  }

  private static List<URI> nodes(String csv) {
    return Arrays.stream(csv.split(","))
        .map(String::strip)
        .filter(url -> !url.isEmpty())
        .map(URI::create)
        .toList();
  }

  /** What is wrong with the settings taken together (empty when nothing). */
  static List<String> problems(Map<String, String> values) {
    String urls = values.getOrDefault("ENGRAM_SOLR_URL", "");
    if (!values.getOrDefault("ENGRAM_MEMORY_INDEX", "lucene").equals("solr")) {
      return List.of();
    }
    if (urls.isBlank()) {
      return List.of("ENGRAM_MEMORY_INDEX=solr needs ENGRAM_SOLR_URL: the Solr nodes' base URLs,"
          + " comma-separated (http://solr-1:8983/solr,http://solr-2:8983/solr)");
    }
    long timeout = Long.parseLong(values.getOrDefault("ENGRAM_SOLR_TIMEOUT_MS", "5000"));
    long request = Long.parseLong(values.getOrDefault("REQUEST_TIMEOUT", "120")) * 1000;
    if (timeout * SEARCHES_PER_RETRIEVAL > request) {
      return List.of("ENGRAM_SOLR_TIMEOUT_MS (" + timeout + ") must be at most a quarter of"
          + " REQUEST_TIMEOUT (" + request / 1000 + " s): a retrieval asks Solr up to "
          + SEARCHES_PER_RETRIEVAL + " times in turn, and must answer (503 when Solr is away)"
          + " before the request is cut");
    }
    for (String url : urls.split(",")) {
      String u = url.strip();
      if (!u.isEmpty() && !(u.startsWith("http://") || u.startsWith("https://"))) {
        return List.of("ENGRAM_SOLR_URL must list http:// or https:// URLs (" + u + ")");
      }
      try {
        URI.create(u);
      } catch (IllegalArgumentException e) {
        return List.of("ENGRAM_SOLR_URL holds a URL that cannot be read: " + u);
      }
    }
    return List.of();
  }
}
