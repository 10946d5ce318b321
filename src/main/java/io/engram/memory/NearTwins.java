package io.engram.memory;

import io.engram.platform.http.ApiException;
import java.util.List;
import java.util.Optional;

/**
 * The durable memory an encode nearly repeats, found among the index's nearest to its embedding
 * and confirmed on the rows (the index is derived: rows decide).
 */
final class NearTwins {
  private final MemoryStore store;
  private final MemoryIndex index;

  NearTwins(MemoryStore store, MemoryIndex index) {
    this.store = store;
    this.index = index;
  }

  /** A durable memory an encode nearly repeats, and how alike their embeddings are. */
  record NearTwin(String id, double similarity) {}

  /**
   * The durable memory of the boundary most like {@code embedding} (among the index's nearest),
   * if it is at least {@code similarity} alike, about the same subject (or either has none) and, when
   * the encode names its time, of that time.
   */
  Optional<NearTwin> find(
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
}
