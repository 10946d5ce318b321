package io.engram.reflection;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.memory.AgentScope;
import io.engram.memory.ChangeAuthor;
import io.engram.memory.MemoryMaintenance;
import io.engram.memory.MemoryRecord;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.jdbi.v3.core.Handle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reflection runs: started by hand or by each organization's schedule, one at a time per
 * organization across every node (a lease row in the database), executed in the background on one
 * low-priority thread per node so retrieval keeps the CPU it needs. A run plans from a snapshot,
 * then applies (or, dry, only records) each change; anything applied can be undone.
 */
public final class ReflectionService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ReflectionService.class);
  /** How long a lease lasts without renewal; a running run renews it as it goes. */
  static final Duration LEASE = Duration.ofMinutes(2);

  private final ReflectionStore store;
  private final MemoryMaintenance memory;
  private final ChangeApplier applier;
  private final Clock clock;
  private final String node = "node-" + UUID.randomUUID().toString().substring(0, 8);
  private final ExecutorService runner = Executors.newSingleThreadExecutor(Thread.ofPlatform()
      .name("reflection")
      .daemon()
      .priority(Thread.MIN_PRIORITY)
      .factory());
  /** Runs this node accepted and has not finished: their leases and rows are settled on shutdown. */
  private final Map<String, ReflectionRun> pending = new ConcurrentHashMap<>();
  /** Set on shutdown; a run checks it at every step. (Not an interrupt: see {@link #close}.) */
  private volatile boolean stopping;

  public ReflectionService(Database database, MemoryMaintenance memory, Clock clock) {
    this.store = new ReflectionStore(database);
    this.memory = memory;
    this.applier = new ChangeApplier(memory, store, clock);
    this.clock = clock;
  }
  /** The store the report reads its figures from. */
  /**
   * Reflection's part of an erasure: the reasons of its changes to the erased memories (a conflict's
   * reason quotes the words the two memories share) are removed; the changes themselves stay.
   */
  public io.engram.store.ErasureParticipant erasure() {
    return target -> List.of(new io.engram.store.ErasureParticipant.Removed(
        "reflection events",
        store.forget(target.orgId(), target.memoryIds()),
        "reasons removed (they quote the memories' words)"));
  }

  ReflectionStore store() {
    return store;
  }

  // ---- settings

  public ReflectionSettings settings(String orgId) {
    return store
        .settings(orgId)
        .map(ReflectionSettings::fromJson)
        .orElse(ReflectionSettings.DEFAULTS);
  }

  public ReflectionSettings updateSettings(Principal caller, ObjectNode patch) {
    ReflectionSettings updated = settings(caller.orgId()).patched(patch);
    store.saveSettings(caller.orgId(), updated.json(), caller.credentialId(), clock.instant());
    return updated;
  }

  /** When the schedule starts the next run: null when scheduling is off. */
  public Instant nextRunAt(String orgId, ReflectionSettings settings) {
    if (!settings.enabled()) {
      return null;
    }
    Instant last = store.database().read(h -> store.lastRunStart(h, orgId)).orElse(null);
    Instant now = clock.instant();
    Instant next = last == null ? now : last.plus(Duration.ofMinutes(settings.intervalMinutes()));
    return next.isBefore(now) ? now : next;
  }

  // ---- runs

  /** Starts a run now for the caller's organization; a 409 naming the run in progress if there is one. */
  public ReflectionRun start(
      Principal caller, boolean dryRun, Set<ReflectionProcess> processes, String requestId) {
    ReflectionSettings settings = settings(caller.orgId());
    ReflectionRun run = newRun(
        caller.orgId(),
        ReflectionRun.Trigger.MANUAL,
        caller.credentialId(),
        caller.user() == null ? null : caller.user().id(),
        requestId,
        dryRun,
        settings,
        processes);
    if (!claim(run, settings, false)) {
      String holder = store.leaseHolderRun(caller.orgId(), clock.instant()).orElse("another run");
      throw ApiException.conflict(
          "reflection_running",
          "Reflection run " + holder + " is in progress for this "
              + "organization; one run at a time. Try again when it has finished.");
    }
    submit(run, settings, processes);
    return run;
  }

  /**
   * The schedule: starts a run for every organization whose interval has passed since its last
   * run. Safe on any number of nodes at once: each start takes the lease and re-checks that the
   * run is still due inside the same transaction.
   */
  public List<ReflectionRun> tick() {
    Instant now = clock.instant();
    List<ReflectionRun> started = new ArrayList<>();
    for (ReflectionStore.ScheduleState state : store.scheduleStates()) {
      ReflectionSettings settings = state.settingsJson() == null
          ? ReflectionSettings.DEFAULTS
          : ReflectionSettings.fromJson(state.settingsJson());
      if (!settings.enabled() || !due(state.lastRunAt(), settings, now)) {
        continue;
      }
      Set<ReflectionProcess> all = EnumSet.allOf(ReflectionProcess.class);
      ReflectionRun run = newRun(
          state.orgId(), ReflectionRun.Trigger.SCHEDULE, null, null, null, false, settings, all);
      if (claim(run, settings, true)) {
        submit(run, settings, all);
        started.add(run);
      }
    }
    return started;
  }

  private static boolean due(Instant lastRunAt, ReflectionSettings settings, Instant now) {
    return lastRunAt == null
        || !lastRunAt.plus(Duration.ofMinutes(settings.intervalMinutes())).isAfter(now);
  }

  private ReflectionRun newRun(
      String orgId,
      ReflectionRun.Trigger trigger,
      String credentialId,
      String userId,
      String requestId,
      boolean dryRun,
      ReflectionSettings settings,
      Set<ReflectionProcess> processes) {
    Instant now = clock.instant();
    Map<String, Object> inForce = new LinkedHashMap<>(settings.view());
    inForce.put(
        "processes", processes.stream().map(ReflectionProcess::id).sorted().toList());
    return new ReflectionRun(
        Ids.newId("rrun", now.toEpochMilli()),
        orgId,
        trigger,
        credentialId,
        userId,
        requestId,
        dryRun,
        ReflectionRun.Status.RUNNING,
        Json.write(inForce),
        node,
        now,
        null,
        0,
        null,
        null,
        null,
        null);
  }

  /**
   * Takes the lease and records the run, in one transaction; false when another run holds the
   * lease (or, for the schedule, the run is no longer due).
   */
  private boolean claim(ReflectionRun run, ReflectionSettings settings, boolean scheduled) {
    Instant now = clock.instant();
    try {
      return store.database().write(h -> claim(h, run, settings, scheduled, now));
    } catch (NotDue e) {
      return false;
    }
  }

  private boolean claim(
      Handle h, ReflectionRun run, ReflectionSettings settings, boolean scheduled, Instant now) {
    if (!store.acquireLease(h, run.orgId(), run.id(), node, now, now.plus(LEASE))) {
      return false;
    }
    if (scheduled && !due(store.lastRunStart(h, run.orgId()).orElse(null), settings, now)) {
      // Another node ran it between our look at the schedule and now: roll the lease back.
      throw new NotDue();
    }
    int abandoned = store.abandonRuns(h, run.orgId(), run.id(), now);
    if (abandoned > 0) {
      LOG.warn(
          "reflection: {} run(s) of organization {} were left running by a stopped node; marked failed",
          abandoned,
          run.orgId());
    }
    store.insertRun(h, run);
    return true;
  }

  private static final class NotDue extends RuntimeException {
    NotDue() {
      super(null, null, false, false);
    }
  }

  private void submit(
      ReflectionRun run, ReflectionSettings settings, Set<ReflectionProcess> processes) {
    pending.put(run.id(), run);
    runner.execute(() -> execute(run, settings, processes));
  }

  private void execute(
      ReflectionRun run, ReflectionSettings settings, Set<ReflectionProcess> processes) {
    long started = System.nanoTime();
    Heartbeat heartbeat = new Heartbeat(run);
    long examined = 0;
    try {
      heartbeat.renew();
      ReflectionPlanner.Plan plan = new ReflectionPlanner(
              memory,
              settings,
              processes,
              clock.instant(),
              store.openFlags(run.orgId(), ChangeApplier.FLAG_STALE),
              store.openFlags(run.orgId(), ChangeApplier.FLAG_CONFLICT),
              heartbeat,
              ReflectionPlanner.ALL_PAIRS_LIMIT)
          .plan(run.orgId());
      examined = plan.examined();
      Map<String, Object> counts = new LinkedHashMap<>();
      counts.put("proposed", countByChange(plan.proposals()));
      if (run.dryRun()) {
        applier.propose(run.orgId(), run.id(), plan.proposals(), heartbeat);
      } else {
        counts.putAll(applier.apply(run.orgId(), run.id(), plan.proposals(), heartbeat));
      }
      store.finishRun(
          run.id(),
          ReflectionRun.Status.COMPLETED,
          clock.instant(),
          examined,
          Json.write(counts),
          null);
      LOG.info(
          "reflection run {} of organization {} completed in {} ms: {} memories examined, {} changes {}",
          run.id(),
          run.orgId(),
          (System.nanoTime() - started) / 1_000_000,
          examined,
          plan.proposals().size(),
          run.dryRun() ? "proposed" : "planned");
    } catch (RuntimeException e) {
      String error =
          e instanceof LeaseLost || e instanceof Stopped ? e.getMessage() : "internal error: " + e;
      LOG.warn(
          "reflection run {} of organization {} failed: {}", run.id(), run.orgId(), e.toString());
      store.finishRun(
          run.id(), ReflectionRun.Status.FAILED, clock.instant(), examined, null, error);
    } finally {
      store.releaseLease(run.orgId(), run.id());
      pending.remove(run.id());
    }
  }

  private static Map<String, Integer> countByChange(List<Proposal> proposals) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    proposals.forEach(p -> counts.merge(p.change().id(), 1, Integer::sum));
    return counts;
  }

  /** Keeps the run's lease alive while it works, and stops the run when the node shuts down. */
  private final class Heartbeat implements Runnable {
    private final ReflectionRun run;
    private long lastRenewal;

    Heartbeat(ReflectionRun run) {
      this.run = run;
    }

    @Override
    public void run() {
      if (stopping) {
        throw new Stopped();
      }
      if (System.nanoTime() - lastRenewal > LEASE.toNanos() / 4) {
        renew();
      }
    }

    void renew() {
      if (stopping) {
        throw new Stopped();
      }
      if (!store.renewLease(run.orgId(), run.id(), clock.instant().plus(LEASE))) {
        throw new LeaseLost();
      }
      lastRenewal = System.nanoTime();
    }
  }

  private static final class LeaseLost extends RuntimeException {
    LeaseLost() {
      super("the run's lease expired and another run took over");
    }
  }

  private static final class Stopped extends RuntimeException {
    Stopped() {
      super("the node shut down before the run finished");
    }
  }

  // ---- reads

  public ReflectionRun run(Principal caller, String runId) {
    return store
        .run(caller.orgId(), runId)
        .orElseThrow(() -> ApiException.notFound("Reflection run " + runId + " not found"));
  }

  public List<ReflectionRun> runs(
      Principal caller, Instant since, Instant until, String beforeId, int limit) {
    return store.runs(caller.orgId(), since, until, beforeId, limit);
  }

  public List<ReflectionEvent> events(
      Principal caller, ReflectionStore.EventFilter filter, long afterSeq, int limit) {
    return store.events(caller.orgId(), filter, afterSeq, limit);
  }

  /** A run's events in order, the first {@code limit}; for the audit. */
  public List<ReflectionEvent> runEvents(ReflectionRun run, int limit) {
    return store.events(
        run.orgId(),
        new ReflectionStore.EventFilter(run.id(), null, null, null, null, null),
        0,
        limit);
  }

  /**
   * Reflection's part of a memory's provenance: its open flags and every event about it, leaving
   * out those that name a memory the caller's boundary cannot see (another agent's).
   */
  public Map<String, Object> provenance(String orgId, String memoryId, AgentScope scope) {
    List<ReflectionEvent> events = store.eventsAbout(orgId, memoryId);
    List<Map<String, Object>> flags = store.flagsOn(memoryId);
    Set<String> others = new HashSet<>();
    events.forEach(
        e -> others.add(e.memoryId().equals(memoryId) ? e.relatedMemoryId() : e.memoryId()));
    flags.forEach(f -> others.add((String) f.get("relatedMemoryId")));
    others.remove(null);
    Map<String, MemoryRecord> visible = memory.findAll(orgId, others);
    Predicate<String> shown =
        id -> id == null || visible.containsKey(id) && scope.sees(visible.get(id));
    Map<String, Object> view = new LinkedHashMap<>();
    view.put(
        "flags",
        flags.stream()
            .filter(f -> shown.test((String) f.get("relatedMemoryId")))
            .toList());
    view.put(
        "events",
        events.stream()
            .filter(
                e -> shown.test(e.memoryId().equals(memoryId) ? e.relatedMemoryId() : e.memoryId()))
            .map(ReflectionViews::event)
            .toList());
    return Map.of("reflection", view);
  }

  // ---- undo

  /** What an undo did: the events it took back and those it could not, with why. */
  public record Undone(List<String> undone, List<Map<String, String>> skipped) {}

  public ReflectionEvent event(Principal caller, String eventId) {
    return store
        .event(caller.orgId(), eventId)
        .orElseThrow(() -> ApiException.notFound("Reflection event " + eventId + " not found"));
  }

  public Undone undoEvent(Principal caller, String eventId, String reason, String requestId) {
    ReflectionEvent event = event(caller, eventId);
    applier.undo(caller.orgId(), event, author(caller, requestId), undoneBy(caller), reason);
    return new Undone(List.of(eventId), List.of());
  }

  /** Undoes every applied change of a run, newest first; changes whose memory moved on are reported, not forced. */
  public Undone undoRun(Principal caller, String runId, String reason, String requestId) {
    ReflectionRun run = run(caller, runId);
    if (run.status() == ReflectionRun.Status.RUNNING) {
      throw ApiException.conflict(
          "reflection_running",
          "Reflection run " + runId + " is still running; undo it " + "when it has finished");
    }
    if (run.dryRun()) {
      throw ApiException.conflict(
          "not_applied", "Reflection run " + runId + " was a dry run: it changed nothing");
    }
    List<String> undone = new ArrayList<>();
    List<Map<String, String>> skipped = new ArrayList<>();
    for (ReflectionEvent event : store.undoableEvents(runId)) {
      try {
        applier.undo(caller.orgId(), event, author(caller, requestId), undoneBy(caller), reason);
        undone.add(event.id());
      } catch (ApiException e) {
        skipped.add(Map.of("eventId", event.id(), "reason", e.getMessage()));
      }
    }
    if (skipped.isEmpty()) {
      store.markRunUndone(runId, clock.instant(), undoneBy(caller));
    }
    return new Undone(undone, skipped);
  }

  private static ChangeAuthor author(Principal caller, String requestId) {
    return ChangeAuthor.of(caller, requestId);
  }

  private static String undoneBy(Principal caller) {
    return caller.user() != null
        ? "user:" + caller.user().id()
        : "credential:" + caller.credentialId();
  }

  /**
   * Stops taking runs; the one in progress stops at its next step and is marked failed, queued
   * ones too. The thread is not interrupted: an interrupt during index I/O would make Lucene close
   * the index writer for good.
   */
  @Override
  public void close() {
    stopping = true;
    runner.shutdown();
    try {
      runner.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ReflectionRun run : pending.values()) {
      try {
        store.finishRun(
            run.id(),
            ReflectionRun.Status.FAILED,
            clock.instant(),
            0,
            null,
            new Stopped().getMessage());
        store.releaseLease(run.orgId(), run.id());
      } catch (RuntimeException e) {
        LOG.warn("could not settle reflection run {} on shutdown: {}", run.id(), e.toString());
      }
    }
  }
}
