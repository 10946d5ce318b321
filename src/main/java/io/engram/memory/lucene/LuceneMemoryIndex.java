package io.engram.memory.lucene;

import io.engram.memory.ChangeFollower;
import io.engram.memory.ChangeLog;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryAnalyzer;
import io.engram.memory.MemoryDocument;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryModule;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySearch;
import io.engram.memory.MemoryStore;
import io.engram.platform.config.EngramConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
import org.apache.lucene.store.AlreadyClosedException;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.NRTCachingDirectory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded {@link MemoryIndex}, every node's own: BM25 over each memory's text and an HNSW graph over its
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
public final class LuceneMemoryIndex implements MemoryIndex {

  /** The embedded Lucene index in the data directory (ENGRAM_MEMORY_INDEX=lucene, the default). */
  public static MemoryModule.IndexOpener embedded(EngramConfig config, Clock clock) {
    return stores -> new LuceneMemoryIndex(
        config.storage().dataDir().resolve("index").resolve("memory"),
        stores.memories(),
        stores.changeLog(),
        clock);
  }

  private static final Logger LOG = LoggerFactory.getLogger(LuceneMemoryIndex.class);
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

  private final MemoryStore store;
  private final ChangeLog changeLog;
  private final Clock clock;
  private final Directory directory;
  private final Analyzer analyzer = new MemoryAnalyzer();
  /** The writer and the searchers over it: replaced together when a failure closed the writer. */
  private record Lucene(IndexWriter writer, SearcherManager searchers) {}

  private volatile Lucene lucene;
  /**
   * Why the index is out of step with the database (a write, refresh or commit failed: a full disk
   * closes Lucene's writer for good), null while it is not. Writes go on being acknowledged, since
   * the database holds them and the change log says what to replay; {@link #recoverIfNeeded}
   * reopens the index and replays from its last commit, and readiness says not ready until then.
   */
  private volatile Throwable failure;

  /** While a recovery replays: its own failures are expected until space returns, and not logged. */
  private volatile boolean recovering;

  private final MemorySearch search;
  private final Object[] locks = new Object[LOCK_STRIPES];
  private final ChangeFollower follower;

  private OpeningReport openingReport;

  public LuceneMemoryIndex(
      Path directoryPath, MemoryStore store, ChangeLog changeLog, Clock clock) {
    this.store = store;
    this.changeLog = changeLog;
    this.clock = clock;
    this.follower = new ChangeFollower(changeLog, clock);
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
      this.lucene = openLucene(staleReason == null);
      this.search = new LuceneMemorySearch(() -> lucene.searchers(), analyzer);
      long started = System.nanoTime();
      long replayed = 0;
      if (staleReason != null) {
        rebuild();
      } else {
        replayed = catchUp(committed);
      }
      long documents;
      int segments;
      SearcherManager searchers = lucene.searchers();
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

  private Lucene openLucene(boolean append) throws IOException {
    IndexWriterConfig config = new IndexWriterConfig(analyzer)
        .setOpenMode(
            append
                ? IndexWriterConfig.OpenMode.CREATE_OR_APPEND
                : IndexWriterConfig.OpenMode.CREATE)
        .setRAMBufferSizeMB(WRITING_BUFFER_MB)
        .setSimilarity(MemoryDocument.SIMILARITY);
    IndexWriter writer = new IndexWriter(directory, config);
    SearcherManager searchers = new SearcherManager(writer, new SearcherFactory() {
      @Override
      public IndexSearcher newSearcher(IndexReader reader, IndexReader previousReader) {
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setSimilarity(MemoryDocument.SIMILARITY);
        return searcher;
      }
    });
    return new Lucene(writer, searchers);
  }

  /** Why the index is not serving what the database holds, or null when it is. */
  @Override
  public String engine() {
    return "lucene";
  }

  @Override
  public String notReadyBecause() {
    Throwable why = failure;
    return why == null ? null : "the memory index failed (" + why + ") and is recovering";
  }

  /**
   * After a failure: reopens the index from its last commit and replays the change log from there
   * (what was written since is in the database). Run every second by the memory's job; a disk that
   * is still full fails the replay's commit, and the next run tries again. Returns whether the index
   * recovered now.
   */
  @Override
  public synchronized boolean recoverIfNeeded() {
    Throwable why = failure;
    if (why == null) {
      return false;
    }
    Lucene old = lucene;
    recovering = true;
    try {
      closeQuietly(old);
      Map<String, String> committed = committedData();
      String staleReason = staleReason(committed);
      lucene = openLucene(staleReason == null);
      follower.restartAt(follower.position());
      failure = null;
      long replayed;
      if (staleReason != null) {
        rebuild();
        replayed = -1;
      } else {
        replayed = catchUp(committed);
      }
      if (failure != null) {
        return false;
      }
      LOG.warn("memory index recovered after {}: {} changes replayed", why, replayed);
      return true;
    } catch (IOException | RuntimeException e) {
      failure = why;
      LOG.debug("memory index still failing: {}", e.toString());
      return false;
    } finally {
      recovering = false;
    }
  }

  private static void closeQuietly(Lucene old) {
    try {
      old.searchers().close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing the failed index's searchers: {}", e.toString());
    }
    try {
      old.writer().rollback();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing the failed index's writer: {}", e.toString());
    }
  }

  /**
   * Records a failed index operation: the index is out of step until it recovers. Only what the
   * index's storage can fail with counts (an I/O error, a writer Lucene closed after one); a
   * document Lucene refuses is a defect that replaying would meet again, and stays the caller's
   * error.
   */
  private void failed(Exception e) {
    if (failure == null && !recovering) {
      LOG.error(
          "memory index failed; writes are kept in the database and replayed once it"
              + " recovers: {}",
          e.toString());
    }
    failure = e;
  }

  @Override
  public OpeningReport openingReport() {
    return openingReport;
  }

  /** Searches over what this index last refreshed. */
  @Override
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
    IndexWriter writer = lucene.writer();
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
    lucene.searchers().maybeRefreshBlocking();
    follower.restartAt(seq);
  }

  private long catchUp(Map<String, String> data) throws IOException {
    long seq = Long.parseLong(data.get("seq"));
    Instant at = Instant.ofEpochMilli(Long.parseLong(data.getOrDefault("at", "0")));
    // Everything since the commit, also what this node believes it applied: after a failure those
    // documents went with the writer.
    long replayed = replay(seq, at.minus(REPLAY_OVERLAP), false);
    commit(follower.position(), clock.instant());
    return replayed;
  }

  /**
   * Applies logged changes after {@code seq} (and any since {@code since}) to the index. Other nodes
   * sharing a PostgreSQL database call this periodically to see each other's writes.
   */
  public long replay(long seq, Instant since) {
    return replay(seq, since, true);
  }

  private long replay(long seq, Instant since, boolean skipApplied) {
    // Skip what this node already applied (its own writes, and what an earlier look replayed).
    return synced(follower.changedSince(seq, since, !skipApplied));
  }

  /** Syncs these memories and refreshes once; returns how many. */
  private long synced(Set<String> ids) {
    ids.forEach(this::sync);
    if (!ids.isEmpty()) {
      refresh();
    }
    return ids.size();
  }

  /** Replays what other nodes wrote since the last look (a short overlap covers late commits). */
  @Override
  public void tail() {
    synced(follower.tail());
  }

  /**
   * Applies what other nodes logged after the last change seen, without the look back: for when
   * another node says it just wrote (a change message), which can come many times a second. The
   * periodic {@link #tail()} keeps its overlap for changes whose transactions committed late.
   */
  @Override
  public void followNew() {
    synced(follower.newer());
  }

  @Override
  public ChangeFollower follower() {
    return follower;
  }

  /**
   * Makes the index agree with the memory's row: indexed when durable, absent otherwise. The row is
   * read under the memory's lock, so of two racing changes the index ends with the later one.
   */
  @Override
  public void sync(String memoryId) {
    // Retrieval's kept row goes too: this is how another node's change reaches this one.
    store.forgetRow(memoryId);
    synchronized (lock(memoryId)) {
      MemoryRecord row;
      try {
        row = store.findById(memoryId).orElse(null);
      } catch (RuntimeException e) {
        if (!io.engram.platform.http.ServerFaults.isServerCondition(e)) {
          throw e; // a defect, not the database away: as before, the caller's error
        }
        // The change is committed (a caller's write must not fail after it); the index is behind
        // until it replays, once the database answers.
        failed(e);
        return;
      }
      apply(memoryId, row);
    }
  }

  /**
   * Makes the index agree with many memories of one organization at once (a restore put them
   * back), reading their rows 500 at a time: at 100,000 memories one read per memory took 26 s.
   * A write to one of them racing this is rare (a restore is an operator's act) and is set right
   * by that memory's next change.
   */
  @Override
  public void syncAll(String orgId, java.util.Collection<String> memoryIds) {
    List<String> ids = List.copyOf(memoryIds);
    for (int from = 0; from < ids.size(); from += 500) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + 500));
      chunk.forEach(store::forgetRow);
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
  @Override
  public void added(MemoryRecord memory) {
    synchronized (lock(memory.id())) {
      apply(memory.id(), memory);
    }
  }

  private Object lock(String memoryId) {
    return locks[Math.floorMod(memoryId.hashCode(), LOCK_STRIPES)];
  }

  /**
   * Writes or removes the memory's document. A failure does not reach the caller (the row is
   * committed, and its change logged): the index is marked failed and recovers by replaying.
   */
  private void apply(String memoryId, MemoryRecord memory) {
    if (failure != null) {
      return;
    }
    try {
      IndexWriter writer = lucene.writer();
      Term id = new Term(MemoryDocument.ID, memoryId);
      if (memory != null && memory.isRetrievable()) {
        writer.updateDocument(id, MemoryDocument.of(memory));
      } else {
        writer.deleteDocuments(id);
      }
    } catch (IOException | AlreadyClosedException | UncheckedIOException e) {
      failed(e);
    }
  }

  /** Makes everything synced so far visible to searches; returns once it is. */
  @Override
  public void refresh() {
    if (failure != null) {
      return;
    }
    try {
      lucene.searchers().maybeRefreshBlocking();
    } catch (IOException | AlreadyClosedException | UncheckedIOException e) {
      failed(e);
    }
  }

  /** Durably commits the index if it changed, recording how far in the change log it is. */
  @Override
  public void commitIfChanged() {
    if (failure != null || !lucene.writer().hasUncommittedChanges()) {
      return;
    }
    Instant at = clock.instant();
    // Read first: a database that cannot answer fails this run of the job, not the index.
    long seq = changeLog.lastSeq();
    try {
      commit(seq, at);
    } catch (IOException | AlreadyClosedException | UncheckedIOException e) {
      failed(e);
    }
  }

  private void commit(long seq, Instant at) throws IOException {
    IndexWriter writer = lucene.writer();
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
      lucene.searchers().close();
      if (failure == null) {
        lucene.writer().close();
      } else {
        lucene.writer().rollback();
      }
      directory.close();
    } catch (IOException e) {
      LOG.warn(
          "memory index did not close cleanly (it catches up on the next start): {}", e.toString());
    }
  }
}
