package io.engram.memory.erasure;

import io.engram.access.Principal;
import io.engram.memory.AgentScope;
import io.engram.memory.ChangeLog;
import io.engram.memory.EventStore;
import io.engram.memory.MemoryHistory;
import io.engram.memory.MemoryIndex;
import io.engram.memory.MemoryReads;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryState;
import io.engram.memory.MemoryStore;
import io.engram.memory.MemoryStores;
import io.engram.memory.Transition;
import io.engram.platform.Digests;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.ErasureParticipant;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Erasure: forgetting an end user's (or one filter's) memories everywhere Engram keeps them, as a
 * job that ends with a receipt. A page of memories at a time, each page in one transaction: the
 * memories lose their text, subject, metadata, embedding and digest and are tombstoned (the row
 * stays for audit, with an {@code erase} transition), their transitions lose their reasons, the
 * replays of their encodes and the events that staged them (and with an end user, that user's
 * events) lose what they said, and the memory is noted as erased by this job; the change log tells
 * every node's index to drop them. Then every {@link ErasureParticipant} (conversation history,
 * stored responses, logged messages, cached answers) removes its part. With a shared database the
 * job then waits until every node has followed (its index and its one-second row cache), and the
 * receipt is written: what each store removed, the memories (count, ids, their digest), the
 * snapshots taken before that still hold them, and a digest of it all.
 *
 * <p>The job holds a lease it renews; when its node dies, another takes it over ({@link
 * #resumeAbandoned}) and goes on from what is left (erased memories are not taken twice, and the
 * items table remembers them).
 */
public final class Erasures {
  private static final Logger LOG = LoggerFactory.getLogger(Erasures.class);
  private static final int PAGE = 200;
  static final Duration LEASE = Duration.ofSeconds(60);
  /** How long every node takes to follow the change log and trust no cached row of before. */
  static final Duration NODES_FOLLOW = Duration.ofMillis(2_500);

  private static final int RECEIPT_IDS = 1_000;

  private final MemoryStore store;
  private final MemoryHistory history;
  private final EventStore events;
  private final ChangeLog changeLog;
  private final MemoryIndex index;
  private final ErasureStore erasures;
  private final boolean sharedDatabase;
  private final Clock clock;
  private final List<ErasureParticipant> participants = new CopyOnWriteArrayList<>();
  private final ExecutorService jobs = Executors.newVirtualThreadPerTaskExecutor();

  Erasures(MemoryStores stores, MemoryIndex index, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.events = stores.events();
    this.changeLog = stores.changeLog();
    this.index = index;
    this.erasures = new ErasureStore(store.database());
    this.sharedDatabase = store.database().kind() == io.engram.store.Database.Kind.POSTGRESQL;
    this.clock = clock;
  }

  /** Adds a store outside the memory that erasures reach. */
  public Erasures include(ErasureParticipant participant) {
    participants.add(participant);
    return this;
  }

  /** Records the erasure and starts it on this node; answers its row (running). */
  ErasureStore.Row start(Principal caller, AgentScope scope, ErasureRequest request) {
    Instant now = clock.instant();
    ErasureStore.Row row = new ErasureStore.Row(
        Ids.newId("era", now.toEpochMilli()),
        caller.orgId(),
        scope.agent(),
        scope.user(),
        Json.write(request.selector()),
        ErasureStore.RUNNING,
        request.reason(),
        caller.credentialId(),
        now,
        null,
        now.plus(LEASE),
        null,
        null);
    erasures.insert(row);
    LOG.info(
        "erasure {} of {} in organization {} started", row.id(), scope.describe(), row.orgId());
    jobs.submit(() -> run(row));
    return row;
  }

  ErasureStore.Row get(String orgId, AgentScope scope, String id) {
    return erasures
        .find(orgId, id)
        .filter(row -> scope.agent() == null || scope.agent().equals(row.agent()))
        .filter(row -> scope.user() == null || scope.user().equals(row.endUser()))
        .orElseThrow(() -> ApiException.notFound("Erasure " + id + " not found"));
  }

  /** Takes over erasures whose node stopped before their receipt; how many it resumed. */
  public int resumeAbandoned() {
    int resumed = 0;
    for (ErasureStore.Row row : erasures.abandoned(clock.instant())) {
      if (erasures.claim(row.id(), row.leaseUntil(), clock.instant().plus(LEASE))) {
        LOG.info("erasure {} resumed on this node (its lease ran out)", row.id());
        run(row);
        resumed++;
      }
    }
    return resumed;
  }

  /** Counts of what the job removed so far, per store (kept with its lease). */
  private static final class Progress {
    long transitions;
    long events;

    /** The counts a job kept with its lease before it stopped, or none. */
    static Progress of(String json) {
      Progress progress = new Progress();
      if (json != null) {
        com.fasterxml.jackson.databind.JsonNode kept =
            Json.read(json, com.fasterxml.jackson.databind.JsonNode.class);
        progress.transitions = kept.path("transitions").asLong();
        progress.events = kept.path("events").asLong();
      }
      return progress;
    }
  }

  private void run(ErasureStore.Row row) {
    Progress progress = Progress.of(row.receiptJson()); // a resumed job counts on
    try {
      ErasureRequest request = ErasureRequest.stored(row.selectorJson(), row.reason());
      AgentScope scope = new AgentScope(row.agent(), row.endUser());
      String cursor = null;
      while (true) {
        List<MemoryRecord> page =
            store.erasablePage(row.orgId(), scope, request.filter(), cursor, PAGE);
        if (page.isEmpty()) {
          break;
        }
        cursor = page.getLast().id();
        List<MemoryRecord> taken = page.stream()
            .filter(m -> MemoryReads.meets(request.filter().metadata(), m))
            .toList();
        erasePage(row, taken, progress);
        erasures.progress(row.id(), clock.instant().plus(LEASE), progressJson(progress), null);
        if (page.size() < PAGE) {
          break;
        }
      }
      // With an end user, their events go too (not only those that staged a memory).
      if (row.endUser() != null) {
        progress.events += store
            .database()
            .write(h -> events.erase(h, row.orgId(), List.of(), row.agent(), row.endUser()));
      }
      List<String> erased = erasures.erasedBy(row.id());
      ErasureParticipant.Target target = new ErasureParticipant.Target(
          row.id(), row.orgId(), row.agent(), row.endUser(), Set.copyOf(erased));
      List<ErasureParticipant.Removed> removed = new ArrayList<>(List.of(
          new ErasureParticipant.Removed(
              "memories",
              erased.size(),
              "text, subject, metadata, embedding and digest removed; tombstoned, the row kept"
                  + " for audit"),
          new ErasureParticipant.Removed(
              "memory index",
              erased.size(),
              "documents deleted on every node (through the change log)"),
          new ErasureParticipant.Removed(
              "memory transitions", progress.transitions, "reasons removed"),
          new ErasureParticipant.Removed(
              "business events", progress.events, "text, subject, metadata, staging removed")));
      // The lease again before the other stores: their part may take a while.
      erasures.progress(row.id(), clock.instant().plus(LEASE), progressJson(progress), null);
      for (ErasureParticipant participant : participants) {
        removed.addAll(participant.erase(target));
      }
      if (sharedDatabase) {
        Thread.sleep(NODES_FOLLOW.toMillis());
      }
      Instant completed = clock.instant();
      List<ErasureParticipant.Holding> holding = new ArrayList<>();
      Instant since = firstMade(row.orgId(), erased);
      for (ErasureParticipant participant : participants) {
        if (since != null) { // nothing erased: no copy holds any of it
          holding.addAll(participant.stillHolding(row.orgId(), since, row.requestedAt()));
        }
      }
      erasures.complete(
          row.id(), Json.write(receipt(row, erased, removed, holding, completed)), completed);
      LOG.info(
          "erasure {} in organization {} completed: {} memories erased",
          row.id(),
          row.orgId(),
          erased.size());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // Left running: its lease runs out and a node (this one too) takes it over again.
      LOG.warn("erasure {} stopped part way, to be resumed: {}", row.id(), e.toString());
      try {
        erasures.progress(row.id(), clock.instant(), progressJson(progress), e.toString());
      } catch (RuntimeException ignored) {
        // the database may be what failed: the lease runs out by itself
      }
    }
  }

  private void erasePage(ErasureStore.Row row, List<MemoryRecord> page, Progress progress) {
    if (page.isEmpty()) {
      return;
    }
    Instant at = clock.instant();
    List<String> ids = page.stream().map(MemoryRecord::id).toList();
    List<Long> changes = store.database().write(h -> {
      progress.events += events.erase(h, row.orgId(), ids, null, null);
      progress.transitions += store.erase(h, ids, at);
      List<Long> seqs = new ArrayList<>();
      for (MemoryRecord memory : page) {
        history.recordTransition(
            h,
            new Transition(
                memory.id(),
                memory.state(),
                MemoryState.TOMBSTONED,
                "erase",
                reasonOf(row.id()),
                null,
                row.credentialId(),
                null,
                null,
                at));
        seqs.add(changeLog.append(h, memory.id(), at));
      }
      erasures.erased(h, row.id(), ids);
      return seqs;
    });
    index.syncAll(row.orgId(), ids);
    changes.forEach(index::applied);
    index.refresh();
  }

  private static String progressJson(Progress progress) {
    return Json.write(Map.of("transitions", progress.transitions, "events", progress.events));
  }

  /** The receipt: what was asked, what each store removed, what still holds, and its digest. */
  private static Map<String, Object> receipt(
      ErasureStore.Row row,
      List<String> erased,
      List<ErasureParticipant.Removed> removed,
      List<ErasureParticipant.Holding> holding,
      Instant completed) {
    Map<String, Object> receipt = new LinkedHashMap<>();
    receipt.put("erasure", row.id());
    receipt.put("organization", row.orgId());
    receipt.put("agent", row.agent());
    receipt.put("userId", row.endUser());
    receipt.put("selector", Json.read(row.selectorJson(), Object.class));
    receipt.put("requestedAt", row.requestedAt().toString());
    receipt.put("completedAt", completed.toString());
    Map<String, Object> memories = new LinkedHashMap<>();
    memories.put("count", erased.size());
    memories.put("idsSha256", idsDigest(erased));
    memories.put("ids", erased.subList(0, Math.min(RECEIPT_IDS, erased.size())));
    memories.put("idsTruncated", erased.size() > RECEIPT_IDS);
    receipt.put("memories", memories);
    receipt.put(
        "removed",
        removed.stream()
            .map(r -> {
              Map<String, Object> one = new LinkedHashMap<>();
              one.put("store", r.store());
              one.put("count", r.count());
              one.put("how", r.how());
              return one;
            })
            .toList());
    receipt.put(
        "stillHolding",
        holding.stream()
            .map(h -> {
              Map<String, Object> one = new LinkedHashMap<>();
              one.put("store", h.store());
              one.put("id", h.id());
              one.put("takenAt", h.takenAt().toString());
              one.put("expiresAt", h.expiresAt() == null ? null : h.expiresAt().toString());
              return one;
            })
            .toList());
    receipt.put("digest", digest(receipt));
    return receipt;
  }

  /** SHA-256 of the erased memories' ids, sorted, one per line. */
  static String idsDigest(List<String> erased) {
    return Digests.sha256(String.join("\n", new TreeSet<>(erased)));
  }

  /** SHA-256 of the receipt's JSON without its digest: anyone holding the receipt can check it. */
  static String digest(Map<String, Object> receipt) {
    Map<String, Object> without = new LinkedHashMap<>(receipt);
    without.remove("digest");
    return "sha256:" + Digests.sha256(Json.write(without));
  }

  /** What checking a receipt again finds. */
  record Verification(
      boolean digestMatches,
      int memoriesChecked,
      List<String> holdingContent,
      Map<String, List<String>> leftBehind,
      List<String> stillIndexed) {
    boolean verified() {
      return digestMatches
          && holdingContent.isEmpty()
          && leftBehind.values().stream().allMatch(List::isEmpty)
          && stillIndexed.isEmpty();
    }
  }

  /** When the first of the erased memories was made; null when none was erased. */
  private Instant firstMade(String orgId, List<String> erased) {
    Instant first = null;
    for (int from = 0; from < erased.size(); from += PAGE) {
      for (MemoryRecord memory : store
          .findAll(orgId, erased.subList(from, Math.min(erased.size(), from + PAGE)))
          .values()) {
        if (first == null || memory.createdAt().isBefore(first)) {
          first = memory.createdAt();
        }
      }
    }
    return first;
  }

  /** The reason of the transition an erasure records on each memory it erased (kept). */
  private static String reasonOf(String erasureId) {
    return "erasure " + erasureId;
  }

  /**
   * Checks a completed erasure again: its receipt's digest, and that none of its memories holds
   * content in the database or a document in this node's index.
   */
  Verification verify(ErasureStore.Row row) {
    if (!ErasureStore.COMPLETED.equals(row.status())) {
      throw ApiException.conflict(
          "erasure_running", "Erasure " + row.id() + " has no receipt yet: it is still running");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> receipt = Json.read(row.receiptJson(), LinkedHashMap.class);
    List<String> erased = erasures.erasedBy(row.id());
    // The receipt is what it was written as, and its ids are the memories this job erased.
    boolean digestMatches = digest(receipt).equals(receipt.get("digest"))
        && idsDigest(erased).equals(((Map<?, ?>) receipt.get("memories")).get("idsSha256"));
    List<String> holding = new ArrayList<>();
    for (int from = 0; from < erased.size(); from += PAGE) {
      store
          .findAll(row.orgId(), erased.subList(from, Math.min(erased.size(), from + PAGE)))
          .values()
          .stream()
          .filter(m -> !m.text().equals(MemoryStore.ERASED_TEXT)
              || m.subject() != null
              || m.metadataJson() != null)
          .forEach(m -> holding.add(m.id()));
    }
    Map<String, List<String>> leftBehind = new LinkedHashMap<>();
    for (int from = 0; from < erased.size(); from += PAGE) {
      store
          .leftBehind(
              row.orgId(),
              erased.subList(from, Math.min(erased.size(), from + PAGE)),
              reasonOf(row.id()))
          .forEach((table, ids) ->
              leftBehind.computeIfAbsent(table, t -> new ArrayList<>()).addAll(ids));
    }
    List<String> indexed = List.copyOf(index.search().indexed(erased));
    return new Verification(digestMatches, erased.size(), holding, leftBehind, indexed);
  }

  /** Stops starting new work; running jobs end with the process (and are resumed elsewhere). */
  void close() {
    jobs.shutdownNow();
  }
}
