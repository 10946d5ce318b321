package io.engram.memory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records "was retrieved" and "an answer used it" uses in the background, in batches, so that
 * neither retrieval nor a chat waits on the database writer (on SQLite there is only one). A
 * retrieval is counted and audited; only an answer's use enters the history that activation reads
 * ({@link UseKind}). A use reaches the database within about
 * {@value #BATCH_MILLIS} ms; the queue is drained on shutdown. Uses are ranking signals, not
 * acknowledged writes: if the process is killed, the last fraction of a second of them is lost,
 * and if the queue ever overflows, uses are dropped and counted rather than slowing retrieval.
 */
final class UseRecorder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(UseRecorder.class);
  static final long BATCH_MILLIS = 200;
  private static final int CAPACITY = 100_000;
  private static final int MAX_BATCH = 2_000;

  record PendingUse(String orgId, String memoryId, UseKind kind, Instant at, String requestId) {}

  private final MemoryStore store;
  private final MemoryHistory history;
  private final BlockingQueue<PendingUse> queue = new LinkedBlockingQueue<>(CAPACITY);
  private final Object writing = new Object();
  private final Thread worker;
  private final AtomicLong queued = new AtomicLong();
  private final AtomicLong settled = new AtomicLong();
  private volatile boolean running = true;
  private final AtomicLong dropped = new AtomicLong();

  UseRecorder(MemoryStores stores) {
    this.store = stores.memories();
    this.history = stores.history();
    this.worker = Thread.ofPlatform().daemon().name("memory-use-recorder").start(this::run);
  }

  void record(String orgId, List<String> memoryIds, UseKind kind, Instant at, String requestId) {
    for (String id : memoryIds) {
      queued.incrementAndGet();
      if (!queue.offer(new PendingUse(orgId, id, kind, at, requestId))) {
        settled.incrementAndGet();
        if (dropped.getAndIncrement() % 1000 == 0) {
          LOG.warn("retrieval-use queue full: {} uses dropped so far", dropped.get());
        }
      }
    }
  }

  /** Writes every use queued so far; returns when they are in the database (or after five seconds). */
  void flush() {
    long target = queued.get();
    List<PendingUse> batch = new ArrayList<>();
    queue.drainTo(batch);
    write(batch);
    // The worker may hold a batch it took before this call: wait until that one is written too.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (settled.get() < target && System.nanoTime() < deadline) {
      try {
        Thread.sleep(2);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private void run() {
    while (running) {
      try {
        PendingUse first = queue.poll(BATCH_MILLIS, TimeUnit.MILLISECONDS);
        if (first == null) {
          continue;
        }
        Thread.sleep(BATCH_MILLIS);
        List<PendingUse> batch = new ArrayList<>(List.of(first));
        queue.drainTo(batch, MAX_BATCH - 1);
        write(batch);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException e) {
        LOG.warn("could not record retrieval uses: {}", e.toString());
      }
    }
  }

  private void write(List<PendingUse> batch) {
    // Holding this lock while writing lets flush() wait for a batch the worker has already taken.
    synchronized (writing) {
      if (batch.isEmpty()) {
        return;
      }
      Map<String, List<PendingUse>> byMemory = new LinkedHashMap<>();
      batch.forEach(use ->
          byMemory.computeIfAbsent(use.memoryId(), id -> new ArrayList<>()).add(use));
      try {
        writeUses(byMemory);
      } finally {
        settled.addAndGet(batch.size());
      }
    }
  }

  /**
   * One transaction for the batch: one read of the memories' uses, one batch of audit rows, one
   * batch of updates (a memory's rows were one read, one insert per use and one update each).
   */
  private void writeUses(Map<String, List<PendingUse>> byMemory) {
    Map<String, String> orgOf = new LinkedHashMap<>();
    byMemory.forEach((id, uses) -> orgOf.put(id, uses.getFirst().orgId()));
    store.database().write(h -> {
      Map<String, MemoryStore.Uses> updated = new LinkedHashMap<>();
      List<MemoryHistory.UseRow> rows = new ArrayList<>();
      Map<String, MemoryStore.Uses> read = store.usesForUpdate(h, orgOf);
      read.forEach((id, current) -> {
        UseHistory history = current.history();
        long retrievals = 0;
        for (PendingUse use : byMemory.get(id)) {
          if (use.kind().feedsActivation()) {
            if (!massed(history, use.kind(), use.at())) {
              history = history.plus(use.kind(), use.at());
            }
          } else {
            retrievals++;
          }
          rows.add(new MemoryHistory.UseRow(id, use.kind(), use.at(), use.requestId()));
        }
        updated.put(id, new MemoryStore.Uses(history, current.counts().plusRetrievals(retrievals)));
      });
      if (!rows.isEmpty()) {
        history.recordUses(h, rows);
        store.writeRecordedUses(h, read, updated);
      }
      return null;
    });
  }

  /**
   * Answers that drew on a memory within {@link #SPACING} of an earlier one are massed practice
   * (the follow-up turns of one conversation, or the same question asked over and over): audited,
   * but only the first enters activation, as repetitions close together add little to memory in
   * ACT-R's spacing account (Pavlik and Anderson, 2005). Without this, a model that repeats
   * whatever it is given lifts the memories it keeps repeating over the rest.
   */
  static boolean massed(UseHistory history, UseKind kind, Instant at) {
    return kind == UseKind.ANSWER
        && history.recent().stream()
            .anyMatch(earlier -> earlier.kind() == UseKind.ANSWER
                && !earlier.at().isBefore(at.minus(SPACING))
                && !earlier.at().isAfter(at));
  }

  /**
   * The use history activation reads, rebuilt from every use a memory has (after a merge or its
   * undo): what feeds activation, in time order, massed answers counted once, as recorded.
   */
  static UseHistory history(List<UseHistory.Use> all) {
    return UseHistory.of(
        all.stream().filter(use -> use.kind().feedsActivation()).toList(),
        (history, use) -> !massed(history, use.kind(), use.at()));
  }

  static final java.time.Duration SPACING = java.time.Duration.ofHours(1);

  @Override
  public void close() {
    // No interrupt: the worker may be inside a database write; it sees the flag within a batch
    // period.
    running = false;
    try {
      worker.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    flush();
  }
}
