package io.engram.memory.solr;

import io.engram.memory.MemoryAnalyzer;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MetadataFilters;
import io.engram.memory.Validity;
import io.engram.platform.json.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;

/**
 * How a memory is laid out in the Solr collection (src/main/resources/solr/memory/schema.xml): the
 * embedded index's fields, with the text as Engram's analyzer cut it (so both engines hold the
 * same terms) and a {@code revision} that says which state of the row the document holds (so the
 * catch-up can check a document without rewriting it).
 */
final class SolrDocuments {
  static final String ID = "id";
  static final String MEMORY_ID = "memory_id";
  static final String ORG = "org";
  static final String AGENT = "agent";
  static final String END_USER = "end_user";
  static final String SESSION = "session";
  static final String SUBJECT = "subject";
  static final String KIND = "kind";
  static final String OCCURRED_AT = "occurred_at";
  static final String VALID_FROM = "valid_from";
  static final String VALID_UNTIL = "valid_until";
  static final String EXPIRES_AT = "expires_at";
  static final String TEXT = "text";
  static final String VECTOR = "vector";
  static final String REVISION = "revision";
  /**
   * Agent and end-user values carry a prefix, so that "organization-wide" and "shared" can never
   * be an agent's or a user's own value (any string is a valid end-user id).
   */
  static final String ORGANIZATION_WIDE = "o";

  static final String SHARED = "s";

  private SolrDocuments() {}

  static String agentValue(String agent) {
    return agent == null ? ORGANIZATION_WIDE : "a" + agent;
  }

  static String endUserValue(String user) {
    return user == null ? SHARED : "u" + user;
  }

  /**
   * The document id: the organization, then "!": Solr's compositeId router hashes what comes
   * before the "!", so every memory of an organization lives on one shard.
   */
  static String id(String orgId, String memoryId) {
    return orgId + "!" + memoryId;
  }

  /** The shard key of an organization's searches ({@code _route_}). */
  static String route(String orgId) {
    return orgId + "!";
  }

  private static long millis(Instant at, long open) {
    return at == null ? open : at.toEpochMilli();
  }

  static Map<String, Object> of(MemoryRecord memory, Analyzer analyzer) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put(ID, id(memory.orgId(), memory.id()));
    doc.put(MEMORY_ID, memory.id());
    doc.put(ORG, memory.orgId());
    doc.put(AGENT, agentValue(memory.agent()));
    doc.put(END_USER, endUserValue(memory.endUser()));
    if (memory.session() != null) {
      doc.put(SESSION, memory.session());
    }
    if (memory.subject() != null) {
      doc.put(SUBJECT, io.engram.memory.MemoryDocument.subjectKey(memory.subject()));
    }
    doc.put(KIND, memory.kind().id());
    doc.put(OCCURRED_AT, memory.occurredAt().toEpochMilli());
    Validity validity = memory.validity();
    doc.put(VALID_FROM, millis(validity.validFrom(), Long.MIN_VALUE));
    doc.put(VALID_UNTIL, millis(validity.validUntil(), Long.MAX_VALUE));
    doc.put(EXPIRES_AT, millis(validity.expiresAt(), Long.MAX_VALUE));
    doc.put(TEXT, MemoryAnalyzer.analyzed(analyzer, memory.indexedText()));
    if (memory.metadataJson() != null) {
      Map<String, List<Object>> metadata = new LinkedHashMap<>();
      MetadataFilters.indexedValues(
              Json.read(memory.metadataJson(), com.fasterxml.jackson.databind.JsonNode.class))
          .forEach(
              v -> metadata.computeIfAbsent(v.field(), f -> new ArrayList<>()).add(v.value()));
      doc.putAll(metadata);
    }
    float[] embedding = memory.embedding();
    List<Float> vector = new ArrayList<>(embedding.length);
    for (float x : embedding) {
      vector.add(x);
    }
    doc.put(VECTOR, vector);
    doc.put(REVISION, revision(doc));
    return doc;
  }

  /** A digest of the document's fields: equal exactly when the document holds the same row state. */
  private static String revision(Map<String, Object> doc) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256")
          .digest(Json.write(doc).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
