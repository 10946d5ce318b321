package io.engram.memory;

import java.util.Locale;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.KnnFloatVectorField;
import org.apache.lucene.document.LongPoint;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.VectorSimilarityFunction;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.util.BytesRef;

/**
 * How a memory is laid out in the Lucene index: the fields the index writes and the searches
 * filter on, and the scoring both use. One place, so writer and searcher cannot disagree.
 */
public final class MemoryDocument {
  /** Bumped whenever the document layout changes: an index of another layout is rebuilt. */
  public static final String LAYOUT = "5";

  public static final String ID = "id";
  public static final String ORG = "org";
  public static final String AGENT = "agent";
  public static final String END_USER = "end_user";
  public static final String VALID_FROM = "valid_from";
  public static final String VALID_UNTIL = "valid_until";
  public static final String EXPIRES_AT = "expires_at";
  public static final String SESSION = "session";
  public static final String SUBJECT = "subject";
  public static final String KIND = "kind";
  public static final String OCCURRED_AT = "occurred_at";
  public static final String TEXT = "text";
  public static final String VECTOR = "vector";
  /** The agent field's value for organization-wide memories. */
  public static final String ORGANIZATION_WIDE = "-";
  /** The end user field's value for memories shared by every user (an id is never empty). */
  public static final String SHARED = "";
  /**
   * BM25 with k1 0.9 and b 0.4 (the usual values for short passages) rather than Lucene's 1.2 and
   * 0.75: memories are a sentence or two, and long ones should not be penalized much for length.
   * Chosen on LoCoMo; measured since on every development set with one left out, where no other
   * value carries to the set left out (docs/benchmarks.md). {@link RankingWeights} holds them.
   */
  public static final BM25Similarity SIMILARITY = new BM25Similarity(
      (float) RankingWeights.CURRENT.bm25K1(), (float) RankingWeights.CURRENT.bm25B());

  private MemoryDocument() {}

  /** Subjects filter case-insensitively and ignoring surrounding spaces. */
  public static String subjectKey(String subject) {
    return subject.strip().toLowerCase(Locale.ROOT);
  }

  private static long millis(java.time.Instant at, long open) {
    return at == null ? open : at.toEpochMilli();
  }

  public static Document of(MemoryRecord memory) {
    Document doc = new Document();
    doc.add(new StringField(ID, memory.id(), Field.Store.YES));
    // Hits read their id from doc values: cheaper than decompressing stored fields per hit.
    doc.add(new SortedDocValuesField(ID, new BytesRef(memory.id())));
    doc.add(new StringField(ORG, memory.orgId(), Field.Store.NO));
    doc.add(new StringField(
        AGENT, memory.agent() == null ? ORGANIZATION_WIDE : memory.agent(), Field.Store.NO));
    doc.add(new StringField(
        END_USER, memory.endUser() == null ? SHARED : memory.endUser(), Field.Store.NO));
    if (memory.session() != null) {
      doc.add(new StringField(SESSION, memory.session(), Field.Store.NO));
    }
    if (memory.subject() != null) {
      doc.add(new StringField(SUBJECT, subjectKey(memory.subject()), Field.Store.NO));
    }
    doc.add(new StringField(KIND, memory.kind().id(), Field.Store.NO));
    doc.add(new LongPoint(OCCURRED_AT, memory.occurredAt().toEpochMilli()));
    // Sortable too: a hit's neighbours in time are found by sorting on it (MemorySearch).
    doc.add(new NumericDocValuesField(OCCURRED_AT, memory.occurredAt().toEpochMilli()));
    // When it holds and expires (open ends as the extremes), so "as of" and expiry filter the
    // search.
    Validity validity = memory.validity();
    doc.add(new LongPoint(VALID_FROM, millis(validity.validFrom(), Long.MIN_VALUE)));
    doc.add(new LongPoint(VALID_UNTIL, millis(validity.validUntil(), Long.MAX_VALUE)));
    doc.add(new LongPoint(EXPIRES_AT, millis(validity.expiresAt(), Long.MAX_VALUE)));
    doc.add(new TextField(TEXT, memory.indexedText(), Field.Store.NO));
    // Metadata, so a search's filters on it run inside the index (MetadataFilters).
    if (memory.metadataJson() != null) {
      MetadataFilters.fields(io.engram.platform.json.Json.read(
              memory.metadataJson(), com.fasterxml.jackson.databind.JsonNode.class))
          .forEach(doc::add);
    }
    doc.add(
        new KnnFloatVectorField(VECTOR, memory.embedding(), VectorSimilarityFunction.DOT_PRODUCT));
    return doc;
  }
}
