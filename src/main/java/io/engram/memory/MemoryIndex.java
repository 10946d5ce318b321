package io.engram.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.SearcherFactory;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.NRTCachingDirectory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retrieval index's lifecycle: BM25 over each memory's text and an HNSW graph over its
 * embedding, in one Lucene index on local disk ({@link MemoryDocument} is its layout,
 * {@link MemorySearch} its queries). It is derived data. It holds exactly the durable memories, so
 * candidates, suppressed and tombstoned memories can never be found by normal retrieval, and it is
 * brought in line with the database by {@link #sync}, which reads a memory's current row and
 * writes or removes its document (so replaying a change twice, or out of order, is harmless).
 *
 * <p>Each commit records the change-log position and time it covers. On start the index catches up
 * from there; when it is missing, unreadable or built by another embedding model, it is rebuilt
 * from the database.
 */
public final class MemoryIndex implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MemoryIndex.class);
  /** Changes logged this long before the last commit are replayed too: their index write may have been in flight. */
  static final Duration REPLAY_OVERLAP = Duration.ofMinutes(1);

  private static final int LOCK_STRIPES = 64;
  /** Lucene's indexing buffer while serving: bounded, since ordinary writes are a few at a time. */
  static final double WRITING_BUFFER_MB = 64;
  /**
   * The indexing buffer of a rebuild: a quarter of the heap, at most 1 GB, so that up to about
   * 400,000 memories become one segment. Each segment is searched on its own, an HNSW graph walk
   * each: measured at 100,000 memories, the 64 MB buffer left four segments and one took a third of
   * their nearest-neighbour search time (docs/benchmarks.md).
   */
  static double rebuildBufferMb() {
    return Math.max(
        WRITING_BUFFER_MB, Math.min(1024, Runtime.getRuntime().maxMemory() / 4 / (1024 * 1024)));
  }
  /** How far back each look at the change log goes again, for transactions that committed late. */
  static final Duration TAIL_OVERLAP = Duration.ofSeconds(10);

  private final MemoryStore store;
  private final ChangeLog changeLog;
  private volatile Runnable announce = () -> {};
  private final Clock clock;
  private final Directory directory;
  private final Analyzer analyzer = new MemoryAnalyzer();
  private final IndexWriter writer;
  private final SearcherManager searchers;
  private final MemorySearch search;
  private final Object[] locks = new Object[LOCK_STRIPES];
  private final AtomicLong tailSeq = new AtomicLong();
  /** Change-log entries applied in the last moments, by position: what following the log need not redo. */
  private final Map<Long, Long> applied = new ConcurrentHashMap<>();

  /** How the index came up: rebuilt or caught up, how many documents and memories, and how long it took. */
  public record OpeningReport(
      boolean rebuilt,
      String reason,
      long documents,
      int segments,
      long replayedChanges,
      long millis) {}

  private OpeningReport openingReport;

  public MemoryIndex(Path directoryPath, MemoryStore store, ChangeLog changeLog, Clock clock) {
    this.store = store;
    this.changeLog = changeLog;
    this.clock = clock;
    for (int i = 0; i < LOCK_STRIPES; i++) {
      locks[i] = new Object();
    }
    try {
      Files.createDirectories(directoryPath);
      // Every write is made searchable before its caller hears back, so each refresh flushes a
      // segment of a few memories: kept in memory until the next commit (up to 64 MB) instead of
      // written, mapped and unmapped as files each time (Lucene's advice for near-real-time).
      this.directory = new NRTCachingDirectory(FSDirectory.open(directoryPath), 8, 64);
      Map<String, String> committed = committedData();
      String staleReason = staleReason(committed);
      IndexWriterConfig config = new IndexWriterConfig(analyzer)
          .setOpenMode(
              staleReason == null
                  ? IndexWriterConfig.OpenMode.CREATE_OR_APPEND
                  : IndexWriterConfig.OpenMode.CREATE)
          .setRAMBufferSizeMB(WRITING_BUFFER_MB)
          .setSimilarity(MemoryDocument.SIMILARITY);
      this.writer = new IndexWriter(directory, config);
      this.searchers = new SearcherManager(writer, new SearcherFactory() {
        @Override
        public IndexSearcher newSearcher(IndexReader reader, IndexReader previousReader) {
          IndexSearcher searcher = new IndexSearcher(reader);
          searcher.setSimilarity(MemoryDocument.SIMILARITY);
          return searcher;
        }
      });
      this.search = new MemorySearch(searchers, analyzer);
      long started = System.nanoTime();
      long replayed = 0;
      if (staleReason != null) {
        rebuild();
      } else {
        replayed = catchUp(committed);
      }
      long documents;
      int segments;
      IndexSearcher searcher = searchers.acquire();
      try {
        documents = searcher.getIndexReader().numDocs();
        segments = searcher.getIndexReader().leaves().size();
      } finally {
        searchers.release(searcher);
      }
      openingReport = new OpeningReport(
          staleReason != null,
          staleReason == null ? "current" : staleReason,
          documents,
          segments,
          replayed,
          (System.nanoTime() - started) / 1_000_000);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the memory index at " + directoryPath, e);
    }
  }

  public OpeningReport openingReport() {
    return openingReport;
  }

  /** Searches over what this index last refreshed. */
  public MemorySearch search() {
    return search;
  }

  /** The user data of the index's last commit; null when there is no readable index. */
  private Map<String, String> committedData() {
    try {
      if (!DirectoryReader.indexExists(directory)) {
        return null;
      }
      try (DirectoryReader reader = DirectoryReader.open(directory)) {
        return reader.getIndexCommit().getUserData();
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("memory index unreadable, rebuilding it: {}", e.toString());
      return Map.of("unreadable", "true");
    }
  }

  /** Why the index on disk cannot be used as it is, or null when it can (then it only catches up). */
  private static String staleReason(Map<String, String> data) {
    if (data == null) {
      return "missing";
    }
    if (data.containsKey("unreadable")) {
      return "unreadable";
    }
    if (!Embedder.MODEL_ID.equals(data.get("model"))
        || !MemoryDocument.LAYOUT.equals(data.get("layout"))) {
      return "built by another model or layout";
    }
    return data.containsKey("seq") ? null : "no change-log position";
  }

  private void rebuild() throws IOException {
    long seq = changeLog.lastSeq();
    Instant at = clock.instant();
    writer.deleteAll();
    writer.getConfig().setRAMBufferSizeMB(rebuildBufferMb());
    try {
      AtomicLong count = new AtomicLong();
      store.forEachRetrievable(memory -> {
        try {
          writer.addDocument(MemoryDocument.of(memory));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        if (count.incrementAndGet() % 20_000 == 0) {
          LOG.info("memory index rebuild: {} memories indexed", count.get());
        }
      });
      commit(seq, at);
    } finally {
      writer.getConfig().setRAMBufferSizeMB(WRITING_BUFFER_MB);
    }
    searchers.maybeRefreshBlocking();
    tailSeq.set(seq);
  }

  private long catchUp(Map<String, String> data) throws IOException {
    long seq = Long.parseLong(data.get("seq"));
    Instant at = Instant.ofEpochMilli(Long.parseLong(data.getOrDefault("at", "0")));
    long replayed = replay(seq, at.minus(REPLAY_OVERLAP));
    commit(tailSeq.get(), clock.instant());
    return replayed;
  }

  /**
   * Applies logged changes after {@code seq} (and any since {@code since}) to the index. Other nodes
   * sharing a PostgreSQL database call this periodically to see each other's writes.
   */
  public long replay(long seq, Instant since) {
    List<ChangeLog.Change> changes = changeLog.since(seq, since);
    Set<String> ids = new LinkedHashSet<>();
    long last = seq;
    for (ChangeLog.Change change : changes) {
      // Skip what this node already applied (its own writes, and what an earlier look replayed).
      if (applied.putIfAbsent(change.seq(), change.changedAt().toEpochMilli()) == null) {
        ids.add(change.memoryId());
      }
      last = Math.max(last, change.seq());
    }
    ids.forEach(this::sync);
    long newest = last;
    tailSeq.accumulateAndGet(newest, Math::max);
    if (!ids.isEmpty()) {
      refresh();
    }
    return ids.size();
  }

  /** Replays what other nodes wrote since the last look (a short overlap covers late commits). */
  public void tail() {
    Instant since = clock.instant().minus(TAIL_OVERLAP);
    applied.values().removeIf(at -> at < since.minus(TAIL_OVERLAP).toEpochMilli());
    replay(tailSeq.get(), since);
  }

  /**
   * Applies what other nodes logged after the last change seen, without the look back: for when
   * another node says it just wrote (a change message), which can come many times a second. The
   * periodic {@link #tail()} keeps its overlap for changes whose transactions committed late.
   */
  public void followNew() {
    replay(tailSeq.get(), Instant.ofEpochMilli(Long.MAX_VALUE));
  }

  /** Notes that this node has applied change {@code seq} itself, so following the log skips it. */
  public void applied(long seq) {
    applied.put(seq, clock.millis());
    announce.run();
  }

  /**
   * What to do when this node wrote a change: tell the other nodes, so they follow the log at once
   * rather than at their next poll (a {@link io.engram.platform.cluster.ChangeSignal}).
   */
  public void announceChangesWith(Runnable announce) {
    this.announce = announce;
  }

  /**
   * Makes the index agree with the memory's row: indexed when durable, absent otherwise. The row is
   * read under the memory's lock, so of two racing changes the index ends with the later one.
   */
  public void sync(String memoryId) {
    synchronized (lock(memoryId)) {
      apply(memoryId, store.findById(memoryId).orElse(null));
    }
  }

  /**
   * Makes the index agree with many memories of one organization at once (a restore put them
   * back), reading their rows 500 at a time: at 100,000 memories one read per memory took 26 s.
   * A write to one of them racing this is rare (a restore is an operator's act) and is set right
   * by that memory's next change.
   */
  public void syncAll(String orgId, java.util.Collection<String> memoryIds) {
    List<String> ids = List.copyOf(memoryIds);
    for (int from = 0; from < ids.size(); from += 500) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + 500));
      Map<String, MemoryRecord> rows = store.findAll(orgId, chunk);
      for (String id : chunk) {
        synchronized (lock(id)) {
          apply(id, rows.get(id));
        }
      }
    }
  }

  /**
   * Indexes a memory just created, from the row the caller committed. Nothing else can have
   * changed it yet (its id is unknown to anyone else), so the database need not be read again.
   */
  public void added(MemoryRecord memory) {
    synchronized (lock(memory.id())) {
      apply(memory.id(), memory);
    }
  }

  private Object lock(String memoryId) {
    return locks[Math.floorMod(memoryId.hashCode(), LOCK_STRIPES)];
  }

  private void apply(String memoryId, MemoryRecord memory) {
    try {
      Term id = new Term(MemoryDocument.ID, memoryId);
      if (memory != null && memory.isRetrievable()) {
        writer.updateDocument(id, MemoryDocument.of(memory));
      } else {
        writer.deleteDocuments(id);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot update the memory index", e);
    }
  }

  /** Makes everything synced so far visible to searches; returns once it is. */
  public void refresh() {
    try {
      searchers.maybeRefreshBlocking();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot refresh the memory index", e);
    }
  }

  /** Durably commits the index if it changed, recording how far in the change log it is. */
  public void commitIfChanged() {
    if (writer.hasUncommittedChanges()) {
      Instant at = clock.instant();
      try {
        commit(changeLog.lastSeq(), at);
      } catch (IOException e) {
        LOG.warn("memory index commit failed: {}", e.toString());
      }
    }
  }

  private void commit(long seq, Instant at) throws IOException {
    writer.setLiveCommitData(Map.of(
            "seq",
            Long.toString(seq),
            "at",
            Long.toString(at.toEpochMilli()),
            "model",
            Embedder.MODEL_ID,
            "layout",
            MemoryDocument.LAYOUT)
        .entrySet());
    writer.commit();
  }

  @Override
  public void close() {
    try {
      commitIfChanged();
      searchers.close();
      writer.close();
      directory.close();
    } catch (IOException e) {
      LOG.warn(
          "memory index did not close cleanly (it catches up on the next start): {}", e.toString());
    }
  }
}
