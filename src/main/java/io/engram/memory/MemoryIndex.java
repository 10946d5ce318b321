package io.engram.memory;

import java.util.Collection;

/**
 * The retrieval index: derived data that holds exactly the durable memories, brought in line with
 * the database by {@link #sync} (which reads a memory's current row and writes or removes its
 * document, so applying a change twice or out of order is harmless). The memory change log says
 * what changed. Two engines: {@code memory.lucene.LuceneMemoryIndex} (embedded, every node its own copy, the
 * default) and the Solr one in {@code io.engram.memory.solr} (one index shared by every node,
 * sharded by organization: {@code ENGRAM_MEMORY_INDEX=solr}).
 */
public interface MemoryIndex extends AutoCloseable {

  /** How the index came up: rebuilt or caught up, how many documents, and how long it took. */
  record OpeningReport(
      boolean rebuilt,
      String reason,
      long documents,
      int segments,
      long replayedChanges,
      long millis) {}

  OpeningReport openingReport();

  /** Which engine: "lucene" or "solr" (logs, readiness, metrics). */
  String engine();

  /** Why the index is out of step with the database, or null when it is not. */
  String notReadyBecause();

  /** After a failure, brings the index back in step; returns whether it recovered now. */
  boolean recoverIfNeeded();

  /** Searches over what the index last refreshed. */
  MemorySearch search();

  /** Follows the changes other nodes logged (periodically, with a look back for late commits). */
  void tail();

  /** Follows what other nodes logged after the last change seen (another node said it wrote). */
  void followNew();

  /** This node's place in the memory change log, and the changes it made itself. */
  ChangeFollower follower();

  /** Notes that this node applied change {@code seq} itself, so following the log skips it. */
  default void applied(long seq) {
    follower().applied(seq);
  }

  /** What to do when this node wrote a change: tell the other nodes (a change signal). */
  default void announceChangesWith(Runnable announce) {
    follower().announceWith(announce);
  }

  /** Makes the index agree with the memory's current row. */
  void sync(String memoryId);

  /**
   * Brings the index in line with a committed row and makes it searchable before the caller
   * hears back: {@code change} is the row's change log entry.
   */
  default void makeVisible(String memoryId, long change) {
    sync(memoryId);
    refresh();
    applied(change);
  }

  /** Makes the index agree with many memories of one organization at once. */
  void syncAll(String orgId, Collection<String> memoryIds);

  /** Indexes a memory just created, from the row the caller committed. */
  void added(MemoryRecord memory);

  /** Makes everything synced so far visible to searches, on every node; returns once it is. */
  void refresh();

  /** Durably commits what changed since the last commit, with the change-log position. */
  void commitIfChanged();

  /** The engine's own background work (none for the embedded index). */
  default java.util.List<io.engram.platform.module.Job> jobs() {
    return java.util.List.of();
  }

  /** Registers the engine's own measures in /metrics (none for the embedded index). */
  default void measureWith(io.micrometer.core.instrument.MeterRegistry registry) {}

  @Override
  void close();
}
