package io.engram.memory.solr;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.ChangeFollower;
import io.engram.memory.ChangeLog;
import io.engram.memory.MemoryAnalyzer;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemorySearch;
import io.engram.memory.MemoryStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.lucene.analysis.Analyzer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory index on Solr ({@code ENGRAM_MEMORY_INDEX=solr}): one collection shared by every
 * Engram node, sharded by organization, instead of a Lucene copy on each.
 *
 * <p>Indexing happens once per change, on the node that made it: the write is sent to Solr after
 * the database committed it and made visible (a soft commit, on every replica) before the caller
 * hears back, so the next request on any node finds it. Other nodes do not index what they read in
 * the change log; they only forget their kept rows of it. What a node could not index (Solr away,
 * or the node killed between its commit and its index write) is found by the <em>catch-up</em>
 * every node runs every few seconds: it reads the change log from the position recorded in Solr
 * itself, compares each changed memory's row with the document's {@code revision}, rewrites only
 * the documents that differ, and moves the position on. The database stays the system of record.
 */
public final class SolrMemoryIndex implements MemoryIndex {
  private static final Logger LOG = LoggerFactory.getLogger(SolrMemoryIndex.class);
  /** Changes this recent are left to their writer (which may be indexing them now). */
  static final Duration GRACE = Duration.ofSeconds(5);
  /** How far before the recorded position the catch-up looks again, for late commits. */
  static final Duration OVERLAP = Duration.ofSeconds(30);

  static final String POSITION_ID = "_engram!position";
  private static final int BATCH = 500;
  /** A bulk load's batch may wait longer than a search: Solr merges segments meanwhile. */
  private static final Duration BULK = Duration.ofSeconds(60);

  private final SolrConnection solr;
  private final SolrCollection collection;
  private final MemoryStore store;
  private final ChangeLog changeLog;
  private final Clock clock;
  private final Analyzer analyzer = new MemoryAnalyzer();
  private final SolrMemorySearch search;

  /** Index writes not yet sent: documents by id, or a deletion (an empty map) by memory id. */
  private final Map<String, Map<String, Object>> pending = new LinkedHashMap<>();

  private final Object flushing = new Object();
  private final Object committing = new Object();
  /** Update requests sent, and how many of them the last soft commit covered. */
  private final AtomicLong sent = new AtomicLong();

  private volatile long committed;
  /** Soft commits made (for the benchmarks: how many writes each one served). */
  private final AtomicLong commits = new AtomicLong();

  private volatile Throwable failure;
  private final ChangeFollower follower;
  private final OpeningReport openingReport;

  /** When this node first saw each change the catch-up has not checked yet (System.nanoTime). */
  private final Map<Long, Long> firstSeen = new ConcurrentHashMap<>();

  /** Changes the catch-up found indexed in {@link #checkedIn}, by position, with their time. */
  private final Map<Long, Long> checked = new ConcurrentHashMap<>();

  private volatile String checkedIn;

  public SolrMemoryIndex(
      SolrConnection solr,
      SolrCollection collection,
      MemoryStore store,
      ChangeLog changeLog,
      Clock clock) {
    this.solr = solr;
    this.collection = collection;
    this.store = store;
    this.changeLog = changeLog;
    this.clock = clock;
    this.search = new SolrMemorySearch(solr, collection::alias, analyzer);
    long started = System.nanoTime();
    this.follower = new ChangeFollower(changeLog, clock);
    follower.restartAt(changeLog.lastSeq());
    boolean created = false;
    long documents = -1;
    String reason = "current";
    try {
      created = collection.ensure();
      if (created) {
        reason = "created: filled from the database";
        fill(collection.alias());
      }
      documents = collection.documents();
      search.routeBy(collection.shards());
    } catch (RuntimeException e) {
      failed(e);
      reason = "Solr unreachable at start (" + e.getMessage() + ")";
    }
    this.openingReport = new OpeningReport(
        created, reason, documents, -1, 0, (System.nanoTime() - started) / 1_000_000);
  }

  /** The Solr index ENGRAM_SOLR_* describe, over the memory's stores. */
  public static SolrMemoryIndex open(
      io.engram.platform.config.MemoryIndexSettings settings,
      io.engram.memory.MemoryStores stores,
      Clock clock) {
    SolrConnection solr = new SolrConnection(
        settings.solrNodes(),
        settings.solrUsername(),
        settings.solrPassword(),
        settings.solrTimeout());
    return new SolrMemoryIndex(
        solr,
        new SolrCollection(
            solr, settings.solrCollection(), settings.solrShards(), settings.solrReplicas()),
        stores.memories(),
        stores.changeLog(),
        clock);
  }

  /**
   * {@code engram admin memory-index reindex}: a full reindex of the Solr collection from the
   * database, beside the current one (which serves meanwhile), the alias moved at the end. The
   * embedded index has no such command: it rebuilds itself at start when it cannot be trusted.
   */
  public static Map<String, Object> reindex(
      io.engram.platform.config.EngramConfig config,
      io.engram.store.Database database,
      Clock clock) {
    if (!config.memoryIndex().solr()) {
      throw io.engram.platform.http.ApiException.badRequest(
          "ENGRAM_MEMORY_INDEX",
          "The embedded memory index (ENGRAM_MEMORY_INDEX=lucene) is each node's own: it is"
              + " rebuilt from the database at start when its directory"
              + " (ENGRAM_DATA_DIR/index/memory) is removed. This command reindexes the Solr"
              + " collection (ENGRAM_MEMORY_INDEX=solr).");
    }
    try (SolrMemoryIndex index =
        open(config.memoryIndex(), io.engram.memory.MemoryStores.open(database), clock)) {
      String before = index.collection().current();
      long started = System.nanoTime();
      long memories = index.reindex();
      Map<String, Object> done = new LinkedHashMap<>();
      done.put("engine", "solr");
      done.put("alias", index.collection().alias());
      done.put("from", before);
      done.put("to", index.collection().current());
      done.put("memories", memories);
      done.put("seconds", (System.nanoTime() - started) / 1_000_000_000.0);
      return done;
    }
  }

  /**
   * Every node runs the catch-up (a read of the change log and of Solr's revisions, which writes
   * only what no node indexed) and looks at the collection's shards.
   */
  @Override
  public List<io.engram.platform.module.Job> jobs() {
    return List.of(
        io.engram.platform.module.Job.every(
            Duration.ofSeconds(2), "index what no node indexed (Solr catch-up)", this::catchUp),
        io.engram.platform.module.Job.every(
            Duration.ofSeconds(2), "check the Solr collection's shards", this::checkShards));
  }

  @Override
  public void measureWith(io.micrometer.core.instrument.MeterRegistry registry) {
    io.micrometer.core.instrument.FunctionCounter.builder(
            "engram_memory_index_updates", this, SolrMemoryIndex::documentsSent)
        .description("Update requests this node sent to Solr (each a write, or several)")
        .register(registry);
    io.micrometer.core.instrument.FunctionCounter.builder(
            "engram_memory_index_commits", this, SolrMemoryIndex::commits)
        .description("Soft commits this node made (one makes every update sent before it visible)")
        .register(registry);
    for (var route :
        Map.of("shard", search.toShard, "collection", search.throughCollection).entrySet()) {
      io.micrometer.core.instrument.FunctionCounter.builder(
              "engram_memory_index_searches", route.getValue(), AtomicLong::get)
          .description("Searches this node sent to Solr: straight to a core of the organization's"
              + " shard, or through the collection (shards not known yet, or a core that did not"
              + " answer)")
          .tag("route", route.getKey())
          .register(registry);
    }
  }

  @Override
  public OpeningReport openingReport() {
    return openingReport;
  }

  @Override
  public String engine() {
    return "solr";
  }

  public SolrCollection collection() {
    return collection;
  }

  @Override
  public String notReadyBecause() {
    Throwable why = failure;
    if (why != null) {
      return "the memory index (Solr) failed (" + why.getMessage() + ")";
    }
    return unserved;
  }

  /** Why some organizations' searches cannot be answered (a shard with no live replica), or null. */
  private volatile String unserved;

  /**
   * Looks at the collection's shards (every few seconds): a shard whose every replica is down makes
   * the node not ready; Solr away is a failure, recovered like any other. What it saw is also where
   * searches go: straight to a core of the organization's shard.
   */
  public void checkShards() {
    try {
      SolrShards shards = collection.shards();
      search.routeBy(shards);
      unserved = SolrCollection.unservedBecause(collection.alias(), shards);
    } catch (SolrConnection.Unavailable e) {
      failed(e);
    }
  }

  private void failed(Throwable e) {
    if (failure == null) {
      LOG.error(
          "memory index (Solr) failed; writes are kept in the database and indexed once it"
              + " answers: {}",
          e.toString());
    }
    failure = e;
  }

  /**
   * After a failure: makes sure the collection is there, and runs the catch-up, which indexes what
   * was written meanwhile. Run every second by the memory's job.
   */
  @Override
  public boolean recoverIfNeeded() {
    Throwable why = failure;
    if (why == null) {
      return false;
    }
    try {
      if (collection.ensure()) {
        fill(collection.alias());
      }
      failure = null;
      flush();
      catchUp();
      if (failure != null) {
        return false;
      }
      LOG.warn("memory index (Solr) answers again after {}", why.getMessage());
      return true;
    } catch (RuntimeException e) {
      failure = why;
      return false;
    }
  }

  /** Soft commits this node made: with {@link #documentsSent}, how many writes each served. */
  public long commits() {
    return commits.get();
  }

  /** Update requests this node sent (a write's documents, or several writers' at once). */
  public long documentsSent() {
    return sent.get();
  }

  @Override
  public MemorySearch search() {
    return search;
  }

  // ---- following the other nodes: their writes are in Solr already; only kept rows go

  @Override
  public void tail() {
    follower.tail().forEach(store::forgetRow);
  }

  @Override
  public void followNew() {
    follower.newer().forEach(store::forgetRow);
  }

  @Override
  public ChangeFollower follower() {
    return follower;
  }

  // ---- writing

  @Override
  public void sync(String memoryId) {
    store.forgetRow(memoryId);
    MemoryRecord row;
    try {
      row = store.findById(memoryId).orElse(null);
    } catch (RuntimeException e) {
      if (!io.engram.platform.http.ServerFaults.isServerCondition(e)) {
        throw e;
      }
      return; // committed and logged: the catch-up indexes it once the database answers
    }
    apply(memoryId, row);
  }

  @Override
  public void syncAll(String orgId, Collection<String> memoryIds) {
    List<String> ids = List.copyOf(memoryIds);
    for (int from = 0; from < ids.size(); from += BATCH) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + BATCH));
      chunk.forEach(store::forgetRow);
      Map<String, MemoryRecord> rows = store.findAll(orgId, chunk);
      chunk.forEach(id -> apply(id, rows.get(id)));
      flush();
    }
  }

  @Override
  public void added(MemoryRecord memory) {
    apply(memory.id(), memory);
  }

  private void apply(String memoryId, MemoryRecord row) {
    Map<String, Object> doc =
        row != null && row.isRetrievable() ? SolrDocuments.of(row, analyzer) : Map.of();
    synchronized (pending) {
      pending.put(memoryId, doc);
    }
  }

  /**
   * Sends what was applied and makes it visible on every replica before returning (Solr's soft
   * commit: a new searcher, no fsync; the transaction log keeps it, and Solr's own hard commit
   * every 15 s makes segments durable).
   */
  @Override
  public void refresh() {
    flush();
  }

  private void flush() {
    long mine;
    synchronized (flushing) {
      Map<String, Map<String, Object>> batch;
      synchronized (pending) {
        batch = new LinkedHashMap<>(pending);
        pending.clear();
      }
      if (!batch.isEmpty()) {
        try {
          send(collection.alias(), batch, false);
          sent.incrementAndGet();
        } catch (RuntimeException e) {
          // Not the caller's failure: its write is committed and logged; the catch-up indexes it.
          failed(e);
          return;
        }
      }
      mine = sent.get();
    }
    // A group commit: one soft commit makes visible every batch sent before it started, so the
    // writers that sent theirs while another commit ran share the next one instead of one each
    // (a soft commit opens a searcher on every replica: the write path's largest cost).
    synchronized (committing) {
      if (committed >= mine) {
        return;
      }
      long upTo = sent.get();
      try {
        solr.get(
            collection.alias() + "/update",
            Map.of("commit", "true", "softCommit", "true", "waitSearcher", "true"));
        committed = upTo;
        commits.incrementAndGet();
      } catch (RuntimeException e) {
        failed(e);
      }
    }
  }

  /** One update request: the documents, the deletions, and a soft commit when asked. */
  private void send(String target, Map<String, Map<String, Object>> batch, boolean commit) {
    send(target, batch, commit, null);
  }

  /** {@link #send}, with a deadline of its own when {@code within} is given (a bulk load). */
  private void send(
      String target, Map<String, Map<String, Object>> batch, boolean commit, Duration within) {
    List<Object> docs = new ArrayList<>();
    List<String> gone = new ArrayList<>();
    batch.forEach((id, doc) -> {
      if (doc.isEmpty()) {
        gone.add(SolrQueries.term(SolrDocuments.MEMORY_ID, id));
      } else {
        docs.add(doc);
      }
    });
    Map<String, Object> body = new LinkedHashMap<>();
    // Deletions by memory id: a row gone from the database has no organization to route by.
    if (!gone.isEmpty()) {
      body.put("delete", Map.of("query", String.join(" OR ", gone)));
    }
    Map<String, String> params =
        commit ? Map.of("commit", "true", "softCommit", "true", "waitSearcher", "true") : Map.of();
    if (!docs.isEmpty()) {
      update(target, gone.isEmpty() ? params : Map.of(), docs, within);
    }
    if (!gone.isEmpty()) {
      update(target, params, body, within);
    }
  }

  private void update(String target, Map<String, String> params, Object body, Duration within) {
    solr.postJson(target + "/update", params, body, within == null ? solr.timeout() : within);
  }

  /** Solr commits by itself (autoCommit); nothing to do here. */
  @Override
  public void commitIfChanged() {
    // Hard commits are Solr's (solrconfig.xml autoCommit); the position moves with the catch-up.
  }

  // ---- the catch-up: what no node indexed

  /** Where the catch-up is in the change log, kept in Solr beside the documents it covers. */
  record Position(long seq, Instant at) {}

  Position position(String target) {
    JsonNode doc = solr.get(target + "/get", Map.of("id", POSITION_ID)).path("doc");
    if (doc.isMissingNode() || doc.isNull()) {
      return new Position(0, Instant.EPOCH);
    }
    return new Position(
        doc.path("position").asLong(),
        Instant.ofEpochMilli(doc.path("position_at").asLong()));
  }

  private void record(String target, Position position) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("id", POSITION_ID);
    doc.put("position", position.seq());
    doc.put("position_at", position.at().toEpochMilli());
    solr.postJson(target + "/update", Map.of(), List.of(doc));
  }

  /**
   * Indexes what the change log holds after the recorded position but Solr does not (a revision
   * that differs, a document that should be gone), then records the new position. Returns how
   * many documents it rewrote. Run by every node every few seconds; what it reads is cheap when
   * every writer indexed its own changes, which is the common case.
   */
  public int catchUp() {
    if (failure != null) {
      return 0;
    }
    try {
      return catchUp(collection.alias(), false);
    } catch (RuntimeException e) {
      if (e instanceof SolrConnection.Unavailable) {
        failed(e);
        return 0;
      }
      throw e;
    }
  }

  private int catchUp(String target, boolean everything) {
    Position from = position(target);
    List<ChangeLog.Change> changes = changeLog.since(from.seq(), from.at().minus(OVERLAP));
    if (!target.equals(checkedIn)) {
      checked.clear();
      firstSeen.clear();
      checkedIn = target;
    }
    long now = System.nanoTime();
    firstSeen.values().removeIf(seen -> now - seen > Duration.ofMinutes(10).toNanos());
    Set<String> ids = new LinkedHashSet<>();
    List<ChangeLog.Change> due = new ArrayList<>();
    long last = from.seq();
    Instant newest = from.at();
    Instant oldestLeft = null;
    for (ChangeLog.Change change : changes) {
      // The look back covers transactions that committed late; what this node checked already in
      // it is not checked again (it would be every change of the last half minute, every run).
      if (checked.containsKey(change.seq())) {
        last = Math.max(last, change.seq());
        continue;
      }
      // A change is its writer's to index for GRACE after this node first saw it: measured here,
      // not by the change's time (another node's clock, or a test's that stands still).
      long seen = firstSeen.computeIfAbsent(change.seq(), seq -> now);
      if (everything || now - seen >= GRACE.toNanos()) {
        due.add(change);
        ids.add(change.memoryId());
        last = Math.max(last, change.seq());
        newest = newest.isAfter(change.changedAt()) ? newest : change.changedAt();
      } else if (oldestLeft == null || change.changedAt().isBefore(oldestLeft)) {
        oldestLeft = change.changedAt();
      }
    }
    int rewritten = repair(target, List.copyOf(ids));
    for (ChangeLog.Change change : due) {
      checked.put(change.seq(), change.changedAt().toEpochMilli());
      firstSeen.remove(change.seq());
    }
    // The next look starts at the oldest change left for later, so it is read again by its time.
    Instant at = oldestLeft != null && oldestLeft.isBefore(newest) ? oldestLeft : newest;
    long forgetBefore = at.minus(OVERLAP.multipliedBy(2)).toEpochMilli();
    checked.values().removeIf(time -> time < forgetBefore);
    if (last > from.seq() || rewritten > 0) {
      record(target, new Position(last, at));
    }
    if (rewritten > 0) {
      LOG.info("memory index (Solr) catch-up: {} documents indexed that no node had", rewritten);
    }
    return rewritten;
  }

  /** Rewrites the documents of {@code ids} that do not hold their row's current state. */
  private int repair(String target, List<String> ids) {
    int rewritten = 0;
    for (int from = 0; from < ids.size(); from += BATCH) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + BATCH));
      Map<String, MemoryRecord> rows = store.findByIds(chunk);
      Map<String, String> held = revisions(target, chunk);
      Map<String, Map<String, Object>> batch = new LinkedHashMap<>();
      for (String id : chunk) {
        MemoryRecord row = rows.get(id);
        Map<String, Object> doc =
            row != null && row.isRetrievable() ? SolrDocuments.of(row, analyzer) : Map.of();
        String want = doc.isEmpty() ? null : (String) doc.get(SolrDocuments.REVISION);
        if (!java.util.Objects.equals(want, held.get(id))) {
          batch.put(id, doc);
        }
      }
      if (!batch.isEmpty()) {
        send(target, batch, true);
        rewritten += batch.size();
      }
    }
    return rewritten;
  }

  /** The revision Solr holds for each of these memories (absent: no document). */
  private Map<String, String> revisions(String target, List<String> ids) {
    Map<String, String> held = new HashMap<>();
    solr.postJson(
            target + "/select",
            Map.of(),
            SolrQueries.byMemoryIds(ids, SolrDocuments.MEMORY_ID + "," + SolrDocuments.REVISION))
        .path("response")
        .path("docs")
        .forEach(doc -> held.put(
            doc.path(SolrDocuments.MEMORY_ID).asText(),
            doc.path(SolrDocuments.REVISION).asText()));
    return held;
  }

  // ---- filling a collection from the database

  /**
   * Fills {@code target} with every retrievable memory (500 per request, one soft commit at the
   * end) and records the change-log position it started from, so the catch-up indexes what was
   * written meanwhile.
   */
  private long fill(String target) {
    Position start = new Position(changeLog.lastSeq(), clock.instant());
    AtomicLong count = new AtomicLong();
    Map<String, Map<String, Object>> batch = new LinkedHashMap<>();
    Consumer<MemoryRecord> add = memory -> {
      batch.put(memory.id(), SolrDocuments.of(memory, analyzer));
      if (batch.size() == BATCH) {
        send(target, batch, false, BULK);
        batch.clear();
        if (count.addAndGet(BATCH) % 20_000 == 0) {
          LOG.info("memory index (Solr) fill of {}: {} memories", target, count.get());
        }
      }
    };
    store.forEachRetrievable(add);
    count.addAndGet(batch.size());
    send(target, batch, false, BULK);
    record(target, start);
    solr.administer(target + "/update", Map.of("commit", "true", "softCommit", "true"));
    LOG.info("memory index (Solr) filled {} with {} memories", target, count.get());
    return count.get();
  }

  /**
   * A full reindex from the database into a new collection while the current one keeps serving:
   * filled, caught up, then the alias moves to it, a last catch-up takes what was written during
   * the move, and the old collection is deleted. Returns the memories indexed.
   */
  public synchronized long reindex() {
    String old = collection.current();
    String next = collection.next(old == null ? collection.alias() + "_0" : old);
    if (collection.collections().contains(next)) {
      collection.delete(next); // a reindex that stopped half way
    }
    collection.create(next);
    long count = fill(next);
    catchUp(next, true);
    collection.pointAliasAt(next);
    checkShards();
    // The old collection goes before the last catch-up, not after: another node's searches go
    // straight to the cores it last saw, and a deleted core sends them to the alias (404), where
    // a core still there would answer from a collection that no longer takes writes.
    if (old != null) {
      collection.delete(old);
    }
    catchUp(next, true);
    LOG.info("memory index (Solr) reindexed into {}: {} memories; {} deleted", next, count, old);
    return count;
  }

  @Override
  public void close() {
    flush();
  }
}
