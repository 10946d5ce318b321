package io.engram.reflection;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.memory.ChangeAuthor;
import io.engram.memory.MemoryAction;
import io.engram.memory.MemoryControl;
import io.engram.memory.MemoryMaintenance;
import io.engram.memory.MemoryState;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Handle;

/**
 * Turns proposals into changes, each recorded as a {@link ReflectionEvent} in the same transaction
 * as the change, and takes applied changes back (undo). State changes commit one by one, so a run
 * never holds the database's writer for long; flags, which touch no memory, commit in batches.
 */
final class ChangeApplier {
  static final int BATCH = 200;
  static final String FLAG_STALE = "stale";
  static final String FLAG_CONFLICT = "conflict";
  /** A supersession's field in its event's before and after: when the older memory stops holding. */
  static final String VALID_UNTIL = "validUntil";

  private final MemoryMaintenance memory;
  private final ReflectionStore store;
  private final Clock clock;

  ChangeApplier(MemoryMaintenance memory, ReflectionStore store, Clock clock) {
    this.memory = memory;
    this.store = store;
    this.clock = clock;
  }

  /** Records every proposal as proposed, changing nothing (a dry run). */
  void propose(String orgId, String runId, List<Proposal> proposals, Runnable heartbeat) {
    for (int from = 0; from < proposals.size(); from += BATCH) {
      heartbeat.run();
      List<Proposal> batch = proposals.subList(from, Math.min(proposals.size(), from + BATCH));
      store.database().write(h -> {
        batch.forEach(p -> store.insertEvent(
            h, event(orgId, runId, p, ReflectionEvent.Outcome.PROPOSED, p.reason(), p.after())));
        return null;
      });
    }
  }

  /** Applies the proposals in order; returns how many of each change were applied and skipped. */
  Map<String, Map<String, Integer>> apply(
      String orgId, String runId, List<Proposal> proposals, Runnable heartbeat) {
    Map<String, Integer> applied = new LinkedHashMap<>();
    Map<String, Integer> skipped = new LinkedHashMap<>();
    List<Proposal> flags = new ArrayList<>();
    for (Proposal p : proposals) {
      heartbeat.run();
      if (isFlag(p.change())) {
        flags.add(p);
        if (flags.size() == BATCH) {
          applyFlags(orgId, runId, flags, applied);
        }
        continue;
      }
      applyFlags(orgId, runId, flags, applied);
      try {
        applyStateChange(orgId, runId, p);
        applied.merge(p.change().id(), 1, Integer::sum);
      } catch (ApiException e) {
        // The memory changed between planning and now (a person acted on it): record why, move on.
        store.database().write(h -> {
          store.insertEvent(
              h,
              event(
                  orgId,
                  runId,
                  p,
                  ReflectionEvent.Outcome.SKIPPED,
                  "skipped: " + e.getMessage(),
                  null));
          return null;
        });
        skipped.merge(p.change().id(), 1, Integer::sum);
      }
    }
    applyFlags(orgId, runId, flags, applied);
    memory.refresh();
    return Map.of("applied", applied, "skipped", skipped);
  }

  private static boolean isFlag(ChangeKind change) {
    return switch (change) {
      case FLAG_STALE, CLEAR_STALE, FLAG_CONFLICT, CLEAR_CONFLICT -> true;
      case MERGE, SUPPRESS, PROMOTE, EXPIRE, SUPERSEDE -> false;
    };
  }

  private static boolean raises(ChangeKind change) {
    return change == ChangeKind.FLAG_STALE || change == ChangeKind.FLAG_CONFLICT;
  }

  private void applyFlags(
      String orgId, String runId, List<Proposal> flags, Map<String, Integer> applied) {
    if (flags.isEmpty()) {
      return;
    }
    Instant now = clock.instant();
    store.database().write(h -> {
      for (Proposal p : flags) {
        ReflectionEvent e =
            event(orgId, runId, p, ReflectionEvent.Outcome.APPLIED, p.reason(), p.after());
        store.insertEvent(h, e);
        setFlag(
            h,
            orgId,
            p.change(),
            p.memoryId(),
            p.relatedMemoryId(),
            e.id(),
            now,
            raises(p.change()));
      }
      return null;
    });
    flags.forEach(p -> applied.merge(p.change().id(), 1, Integer::sum));
    flags.clear();
  }

  /** Raises ({@code raise}) or clears the flag a change kind is about; a conflict flag is set on both memories. */
  private void setFlag(
      Handle h,
      String orgId,
      ChangeKind change,
      String memoryId,
      String related,
      String eventId,
      Instant at,
      boolean raise) {
    boolean conflict = change == ChangeKind.FLAG_CONFLICT || change == ChangeKind.CLEAR_CONFLICT;
    String kind = conflict ? FLAG_CONFLICT : FLAG_STALE;
    List<String[]> rows = conflict
        ? List.of(new String[] {memoryId, related}, new String[] {related, memoryId})
        : List.<String[]>of(new String[] {memoryId, null});
    for (String[] row : rows) {
      if (raise) {
        store.raiseFlag(h, orgId, row[0], kind, row[1], eventId, at);
      } else {
        store.clearFlag(h, row[0], kind, row[1]);
      }
    }
  }

  private void applyStateChange(String orgId, String runId, Proposal p) {
    ChangeAuthor author = ChangeAuthor.reflection(runId);
    String reason = "reflection run " + runId + ": " + p.reason();
    if (p.change() == ChangeKind.MERGE) {
      memory.merge(orgId, p.relatedMemoryId(), p.memoryId(), reason, author, (h, merge) -> {
        Map<String, Object> after = Map.of(
            "absorbed",
            AuditView.of(merge.absorbed().after(), clock.instant()),
            "survivor",
            AuditView.of(merge.survivor().after(), clock.instant()));
        Map<String, Object> before = Map.of(
            "absorbed",
            AuditView.of(merge.absorbed().before(), clock.instant()),
            "survivor",
            AuditView.of(merge.survivor().before(), clock.instant()));
        store.insertEvent(
            h,
            event(
                orgId,
                runId,
                new Proposal(
                    p.change(), p.memoryId(), p.relatedMemoryId(), p.reason(), before, after),
                ReflectionEvent.Outcome.APPLIED,
                p.reason(),
                after));
      });
      return;
    }
    if (p.change() == ChangeKind.SUPERSEDE) {
      memory.supersede(
          orgId,
          p.memoryId(),
          p.relatedMemoryId(),
          Instant.parse((String) p.after().get(VALID_UNTIL)),
          reason,
          author,
          (h, change) -> store.insertEvent(
              h, event(orgId, runId, p, ReflectionEvent.Outcome.APPLIED, p.reason(), p.after())));
      return;
    }
    MemoryAction action = switch (p.change()) {
      case SUPPRESS -> MemoryAction.SUPPRESS;
      case PROMOTE -> MemoryAction.APPROVE;
      case EXPIRE -> MemoryAction.EXPIRE;
      default -> throw new IllegalArgumentException("not a state change: " + p.change());
    };
    memory.act(orgId, p.memoryId(), action, reason, author, (h, change) -> {
      if (change.before().state() == change.after().state()) {
        throw ApiException.conflict(
            "memory_changed",
            "memory " + p.memoryId() + " is already " + change.after().state().id());
      }
      store.insertEvent(
          h,
          event(
              orgId,
              runId,
              new Proposal(
                  p.change(),
                  p.memoryId(),
                  p.relatedMemoryId(),
                  p.reason(),
                  AuditView.of(change.before(), clock.instant()),
                  p.after()),
              ReflectionEvent.Outcome.APPLIED,
              p.reason(),
              AuditView.of(change.after(), clock.instant())));
    });
  }

  private ReflectionEvent event(
      String orgId,
      String runId,
      Proposal p,
      ReflectionEvent.Outcome outcome,
      String reason,
      Map<String, Object> after) {
    Instant now = clock.instant();
    return new ReflectionEvent(
        0,
        Ids.newId("rev", now.toEpochMilli()),
        runId,
        orgId,
        p.change(),
        p.memoryId(),
        p.relatedMemoryId(),
        outcome,
        reason,
        Json.write(p.before()),
        after == null ? null : Json.write(after),
        now,
        null,
        null);
  }

  // ---- undo

  /**
   * Takes one applied change back, in one transaction with marking it undone. A 409 when it was
   * already undone or the memory has moved on since (then a person decides).
   */
  void undo(String orgId, ReflectionEvent e, ChangeAuthor author, String undoneBy, String why) {
    if (e.outcome() != ReflectionEvent.Outcome.APPLIED) {
      throw ApiException.conflict(
          "not_applied",
          "Reflection event " + e.id() + " was " + e.outcome().id()
              + "; only applied changes can be undone");
    }
    if (e.undoneAt() != null) {
      throw ApiException.conflict(
          "already_undone", "Reflection event " + e.id() + " was undone at " + e.undoneAt());
    }
    Instant now = clock.instant();
    MemoryControl.Control control = new MemoryControl.Control(
        "undo of reflection change " + e.id() + " (run " + e.runId() + ")"
            + (why == null ? "" : ": " + why),
        undoneBy);
    switch (e.change()) {
      case MERGE ->
        memory.unmerge(
            orgId,
            e.relatedMemoryId(),
            e.memoryId(),
            survivorConfidence(e),
            control,
            author,
            (h, merge) -> store.markEventUndone(h, e.id(), now, undoneBy));
      case SUPERSEDE ->
        memory.unsupersede(
            orgId,
            e.memoryId(),
            e.relatedMemoryId(),
            Instant.parse(
                Json.read(e.afterJson(), JsonNode.class).path(VALID_UNTIL).asText()),
            control,
            author,
            (h, change) -> store.markEventUndone(h, e.id(), now, undoneBy));
      case SUPPRESS, PROMOTE, EXPIRE ->
        memory.revert(
            orgId,
            e.memoryId(),
            state(e.afterJson()),
            state(e.beforeJson()),
            control,
            author,
            (h, change) -> store.markEventUndone(h, e.id(), now, undoneBy));
      case FLAG_STALE, FLAG_CONFLICT, CLEAR_STALE, CLEAR_CONFLICT ->
        store.database().write(h -> {
          setFlag(
              h,
              orgId,
              e.change(),
              e.memoryId(),
              e.relatedMemoryId(),
              e.id(),
              now,
              !raises(e.change()));
          store.markEventUndone(h, e.id(), now, undoneBy);
          return null;
        });
    }
    memory.refresh();
  }

  private static MemoryState state(String snapshotJson) {
    return MemoryState.fromId(
            Json.read(snapshotJson, JsonNode.class).path("state").asText())
        .orElseThrow();
  }

  private static double survivorConfidence(ReflectionEvent e) {
    return Json.read(e.beforeJson(), JsonNode.class)
        .path("survivor")
        .path("confidence")
        .asDouble();
  }
}
