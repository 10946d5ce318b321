package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.MemoryDocument;
import io.engram.memory.MemoryKind;
import io.engram.memory.MemorySearch;
import io.engram.memory.MetadataFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A search's filter as Solr filter queries (fq), the same conditions as the embedded index's
 * (LuceneMemorySearch): run inside Solr, before its top k, and for the knn query as its pre-filter.
 */
final class SolrQueries {
  /** A filter query Solr's filter cache should not keep (it differs from request to request). */
  static final String UNCACHED = "{!cache=false}";

  private SolrQueries() {}

  /** Escapes a term or field name for Solr's standard query parser. */
  static String escape(String text) {
    StringBuilder out = new StringBuilder(text.length() + 8);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if ("\\+-!():^[]\"{}~*?|&;/".indexOf(c) >= 0 || Character.isWhitespace(c)) {
        out.append('\\');
      }
      out.append(c);
    }
    return out.toString();
  }

  static String term(String field, String value) {
    return escape(field) + ":" + escape(value);
  }

  private static String range(String field, String from, String to) {
    return escape(field) + ":" + from + " TO " + to;
  }

  private static String between(String field, long from, long to) {
    return range(field, "[" + from, to + "]");
  }

  static List<String> filters(MemorySearch.Filter filter) {
    List<String> fq = new ArrayList<>();
    fq.add(term(SolrDocuments.ORG, filter.orgId()));
    fq.add(anyOf(
        SolrDocuments.AGENT,
        SolrDocuments.ORGANIZATION_WIDE,
        filter.scope().agent() == null
            ? null
            : SolrDocuments.agentValue(filter.scope().agent())));
    fq.add(anyOf(
        SolrDocuments.END_USER,
        SolrDocuments.SHARED,
        filter.scope().user() == null
            ? null
            : SolrDocuments.endUserValue(filter.scope().user())));
    if (filter.session() != null) {
      fq.add(term(SolrDocuments.SESSION, filter.session()));
    }
    if (filter.holding() != null) {
      long asOf = filter.holding().asOf().toEpochMilli();
      long now = filter.holding().now().toEpochMilli();
      // The instant changes with every request: Solr's filter cache would compute each range over
      // the whole shard and keep it for nothing; uncached, they are checked against the documents
      // the other filters leave (measured: docs/benchmarks.md, "The memory index on Solr").
      fq.add(UNCACHED + between(SolrDocuments.VALID_FROM, Long.MIN_VALUE, asOf));
      fq.add(UNCACHED + between(SolrDocuments.VALID_UNTIL, asOf + 1, Long.MAX_VALUE));
      fq.add(UNCACHED + between(SolrDocuments.EXPIRES_AT, now + 1, Long.MAX_VALUE));
    }
    if (filter.metadata() != null) {
      filter.metadata().conditions().forEach(c -> fq.add(metadata(c)));
    }
    if (filter.subject() != null) {
      fq.add(term(SolrDocuments.SUBJECT, MemoryDocument.subjectKey(filter.subject())));
    }
    if (filter.kinds() != null && !filter.kinds().isEmpty()) {
      fq.add(filter.kinds().stream()
          .map(MemoryKind::id)
          .map(kind -> term(SolrDocuments.KIND, kind))
          .collect(Collectors.joining(" OR ")));
    }
    if (filter.after() != null || filter.before() != null) {
      long from = filter.after() == null ? Long.MIN_VALUE : filter.after().toEpochMilli();
      long to = filter.before() == null ? Long.MAX_VALUE : filter.before().toEpochMilli() - 1;
      fq.add(UNCACHED + between(SolrDocuments.OCCURRED_AT, from, to));
    }
    return fq;
  }

  /**
   * A request for the documents of these memories (any organization: a check by id, which has no
   * shard to route to), with {@code fields}.
   */
  static java.util.Map<String, Object> byMemoryIds(List<String> ids, String fields) {
    java.util.Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put(
        "query",
        ids.stream()
            .map(id -> term(SolrDocuments.MEMORY_ID, id))
            .collect(Collectors.joining(" OR ")));
    body.put("limit", ids.size());
    body.put("fields", fields);
    body.put("params", java.util.Map.of("q.op", "OR"));
    return body;
  }

  private static String anyOf(String field, String shared, String own) {
    return own == null ? term(field, shared) : term(field, shared) + " OR " + term(field, own);
  }

  /** One metadata condition, as MetadataFilters' Lucene query has it. */
  private static String metadata(MetadataFilters.Condition c) {
    String text = MetadataFilters.TEXT_PREFIX + c.key();
    String number = MetadataFilters.NUMBER_PREFIX + c.key();
    if (c.operator().equals("eq") || c.operator().equals("in")) {
      List<String> any = new ArrayList<>();
      for (JsonNode value : c.values()) {
        any.add(
            value.isNumber()
                ? escape(number) + ":\"" + value.asDouble() + "\""
                : term(text, value.asText()));
      }
      return String.join(" OR ", any);
    }
    JsonNode bound = c.values().getFirst();
    String field = bound.isNumber() ? number : MetadataFilters.TIME_PREFIX + c.key();
    String at = bound.isNumber()
        ? Double.toString(bound.asDouble())
        : Long.toString(MetadataFilters.instant(bound.asText()).toEpochMilli());
    return switch (c.operator()) {
      case "gt" -> range(field, "{" + at, "*]");
      case "gte" -> range(field, "[" + at, "*]");
      case "lt" -> range(field, "[*", at + "}");
      default -> range(field, "[*", at + "]");
    };
  }
}
