package io.engram.memory;

import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.jdbi.v3.core.Handle;

/**
 * What reflection may read and change in an organization's memory. It sees the whole
 * organization (every agent's memories), and every change goes through the state machine
 * ({@link StateChanges}) with a transition naming the run, so provenance explains it. Changes are
 * written to the index as they commit; {@link #refresh} makes a batch of them searchable at once.
 */
public final class MemoryMaintenance {
  /** The actor label on every transition reflection makes. */
  public static final String ACTOR = "reflection";

  /** A memory before and after one change. */
  public record Change(MemoryRecord before, MemoryRecord after) {}

  /** Both memories of a merge (or of its undo), before and after. */
  public record Merge(Change survivor, Change absorbed) {}

  private final MemoryStore store;
  private final MemoryHistory history;
  private final ReflectionReads reads;
  private final MemoryIndex index;
  private final StateChanges changes;
  private final Clock clock;

  MemoryMaintenance(MemoryStores stores, MemoryIndex index, Clock clock) {
    this.store = stores.memories();
    this.history = stores.history();
    this.reads = new ReflectionReads(store.database());
    this.index = index;
    this.changes = new StateChanges(stores);
    this.clock = clock;
  }

  // ---- reads

  public List<ReflectionReads.SubjectCount> subjects(String orgId, Collection<MemoryState> states) {
    return reads.subjects(orgId, states);
  }

  public List<MemoryRecord> withSubjects(
      String orgId,
      Collection<String> subjects,
      Collection<MemoryState> states,
      String afterId,
      int limit) {
    return reads.withSubjects(orgId, subjects, states, afterId, limit);
  }

  public Map<String, MemoryRecord> findAll(String orgId, Collection<String> ids) {
    return store.findAll(orgId, ids);
  }

  public void forEachVitals(
      String orgId,
      MemoryState state,
      java.util.function.Consumer<ReflectionReads.Vitals> consumer) {
    reads.forEachVitals(orgId, state, consumer);
  }

  public Map<MemoryState, Long> countByState(String orgId) {
    return reads.countByState(orgId);
  }

  /** The {@code k} durable memories nearest to this one that its boundary sees, on its subject. */
  public List<MemorySearch.Hit> neighbours(MemoryRecord memory, int k) {
    return index
        .search()
        .vector(
            memory.embedding(),
            new MemorySearch.Filter(
                memory.orgId(),
                new AgentScope(memory.agent(), memory.endUser()),
                memory.subject(),
                null,
                null,
                null),
            k);
  }

  // ---- changes

  /**
   * Applies a state-machine action as reflection, with its reason; {@code record} runs in the same
   * transaction (the audit entry commits with the change or not at all).
   */
  public Change act(
      String orgId,
      String id,
      MemoryAction action,
      String reason,
      ChangeAuthor author,
      BiConsumer<Handle, Change> record) {
    StateChanges.Outcome outcome = store.database().write(h -> {
      StateChanges.Outcome applied = changes.apply(
          h,
          orgId,
          id,
          action,
          new MemoryControl.Control(reason, ACTOR),
          author,
          clock.instant(),
          found -> found.orElseThrow(() -> ApiException.notFound("Memory " + id + " not found")));
      record.accept(h, new Change(applied.before(), applied.after()));
      return applied;
    });
    published(id, outcome.change());
    return new Change(outcome.before(), outcome.after());
  }

  /** Undoes a state change: the memory goes back to {@code back} if it is still {@code expected}. */
  public Change revert(
      String orgId,
      String id,
      MemoryState expected,
      MemoryState back,
      MemoryControl.Control control,
      ChangeAuthor author,
      BiConsumer<Handle, Change> record) {
    StateChanges.Outcome outcome = store.database().write(h -> {
      StateChanges.Outcome reverted =
          changes.revert(h, orgId, id, expected, back, control, author, clock.instant());
      record.accept(h, new Change(reverted.before(), reverted.after()));
      return reverted;
    });
    published(id, outcome.change());
    return new Change(outcome.before(), outcome.after());
  }

  /**
   * Merges a near-duplicate into the memory that survives, in one transaction: the absorbed one
   * is suppressed (action merge), its uses are copied onto the survivor, whose activation summary,
   * counters and confidence (the higher of the two) are recomputed, and the survivor's history
   * gets an "absorb" transition. Both must be durable.
   */
  public Merge merge(
      String orgId,
      String survivorId,
      String absorbedId,
      String reason,
      ChangeAuthor author,
      BiConsumer<Handle, Merge> record) {
    Instant now = clock.instant();
    long[] change = {0};
    Merge merge = store.database().write(h -> {
      MemoryRecord survivor =
          durable(store.findForUpdate(h, orgId, survivorId).orElse(null), survivorId);
      StateChanges.Outcome absorbed = changes.apply(
          h,
          orgId,
          absorbedId,
          MemoryAction.MERGE,
          new MemoryControl.Control(reason, ACTOR),
          author,
          now,
          found -> durable(found.orElse(null), absorbedId));
      change[0] = absorbed.change();
      history.copyUses(h, absorbedId, survivorId);
      store.updateConfidence(
          h, survivorId, Math.max(survivor.confidence(), absorbed.before().confidence()), now);
      recount(h, survivorId);
      history.recordTransition(
          h,
          note(
              survivorId,
              MemoryState.DURABLE,
              "absorb",
              "absorbed " + absorbedId + " (" + reason + ")",
              ACTOR,
              author,
              now));
      Change survivorChange =
          new Change(survivor, store.findForUpdate(h, orgId, survivorId).orElseThrow());
      Merge done = new Merge(survivorChange, new Change(absorbed.before(), absorbed.after()));
      record.accept(h, done);
      return done;
    });
    published(absorbedId, change[0]);
    return merge;
  }

  /**
   * Undoes a merge: the absorbed memory is durable again (if it is still suppressed), the survivor
   * gives back the uses it took and returns to its earlier confidence.
   */
  public Merge unmerge(
      String orgId,
      String survivorId,
      String absorbedId,
      double survivorConfidence,
      MemoryControl.Control control,
      ChangeAuthor author,
      BiConsumer<Handle, Merge> record) {
    Instant now = clock.instant();
    long[] change = {0};
    Merge merge = store.database().write(h -> {
      StateChanges.Outcome absorbed = changes.revert(
          h, orgId, absorbedId, MemoryState.SUPPRESSED, MemoryState.DURABLE, control, author, now);
      change[0] = absorbed.change();
      MemoryRecord survivor = store.findForUpdate(h, orgId, survivorId).orElseThrow();
      history.removeMergedUses(h, absorbedId, survivorId);
      store.updateConfidence(h, survivorId, survivorConfidence, now);
      recount(h, survivorId);
      history.recordTransition(
          h,
          note(
              survivorId,
              survivor.state(),
              "undo",
              "gave back the uses of " + absorbedId
                  + (control.reason() == null ? "" : " (" + control.reason() + ")"),
              control.actor(),
              author,
              now));
      Merge done = new Merge(
          new Change(survivor, store.findForUpdate(h, orgId, survivorId).orElseThrow()),
          new Change(absorbed.before(), absorbed.after()));
      record.accept(h, done);
      return done;
    });
    published(absorbedId, change[0]);
    return merge;
  }

  /**
   * Reflection's resolution of a contradiction over time: {@code older} stops holding at {@code
   * from}, when {@code newer} (which says otherwise) starts, and {@code newer} records that it
   * supersedes it and holds from then, in one transaction, as an encode's {@code supersedes} does. Both must be durable
   * and {@code older} still open (else 409: it moved on since the run planned this).
   */
  public Change supersede(
      String orgId,
      String olderId,
      String newerId,
      Instant from,
      String reason,
      ChangeAuthor author,
      BiConsumer<Handle, Change> record) {
    Instant now = clock.instant();
    long[] change = {0};
    long[] replaced = {0};
    Change done = store.database().write(h -> {
      MemoryRecord older = durable(store.findForUpdate(h, orgId, olderId).orElse(null), olderId);
      MemoryRecord newer = durable(store.findForUpdate(h, orgId, newerId).orElse(null), newerId);
      if (older.validity().validUntil() != null) {
        throw ApiException.conflict(
            "memory_changed",
            "Memory " + olderId + " already stops holding at "
                + older.validity().validUntil());
      }
      store.closeValidity(h, olderId, from, now);
      if (newer.validity().supersedes() == null) {
        // As an encode's replacement does: it holds from its start ("as of" before it, the older).
        store.setReplacement(h, newerId, olderId, from);
        replaced[0] = changes.logged(h, newerId, now);
      }
      history.recordTransition(
          h,
          note(
              olderId,
              older.state(),
              "supersede",
              "superseded by " + newerId + " from " + from + " (" + reason + ")",
              ACTOR,
              author,
              now));
      change[0] = changes.logged(h, olderId, now);
      Change closed = new Change(older, store.findForUpdate(h, orgId, olderId).orElseThrow());
      record.accept(h, closed);
      return closed;
    });
    published(olderId, change[0]);
    published(newerId, replaced[0]);
    return done;
  }

  /**
   * Undoes a supersession: {@code older} holds again if it still stops at {@code until} (else 409),
   * and {@code newer} no longer says it replaced it.
   */
  public Change unsupersede(
      String orgId,
      String olderId,
      String newerId,
      Instant until,
      MemoryControl.Control control,
      ChangeAuthor author,
      BiConsumer<Handle, Change> record) {
    Instant now = clock.instant();
    long[] change = {0};
    long[] replaced = {0};
    Change done = store.database().write(h -> {
      MemoryRecord older = store
          .findForUpdate(h, orgId, olderId)
          .orElseThrow(() -> ApiException.notFound("Memory " + olderId + " not found"));
      if (!until.equals(older.validity().validUntil())) {
        throw ApiException.conflict(
            "memory_changed",
            "Memory " + olderId + " no longer stops holding at " + until
                + "; undo it by hand if it is still wanted");
      }
      store.reopenValidity(h, olderId, now);
      store
          .findForUpdate(h, orgId, newerId)
          .filter(newer -> olderId.equals(newer.validity().supersedes()))
          .ifPresent(newer -> {
            store.setReplacement(h, newerId, null, null);
            replaced[0] = changes.logged(h, newerId, now);
          });
      history.recordTransition(
          h,
          note(
              olderId,
              older.state(),
              "undo",
              "holds again: no longer superseded by " + newerId
                  + (control.reason() == null ? "" : " (" + control.reason() + ")"),
              control.actor(),
              author,
              now));
      change[0] = changes.logged(h, olderId, now);
      Change reopened = new Change(older, store.findForUpdate(h, orgId, olderId).orElseThrow());
      record.accept(h, reopened);
      return reopened;
    });
    published(olderId, change[0]);
    published(newerId, replaced[0]);
    return done;
  }

  /** Makes the changes written so far searchable (or no longer). */
  public void refresh() {
    index.refresh();
  }

  /** A memory's use summary and counters, recomputed from every use it has (its own and merged ones). */
  private void recount(Handle h, String memoryId) {
    List<UseHistory.Use> all = history.uses(h, memoryId);
    long reinforcements =
        all.stream().filter(u -> u.kind() == UseKind.REINFORCE).count();
    long retrievals = all.stream().filter(u -> u.kind() == UseKind.RETRIEVAL).count();
    store.updateUses(
        h,
        memoryId,
        UseRecorder.history(all),
        new MemoryRecord.UseCounts(reinforcements, retrievals));
  }

  private static MemoryRecord durable(MemoryRecord memory, String id) {
    if (memory == null) {
      throw ApiException.notFound("Memory " + id + " not found");
    }
    if (memory.state() != MemoryState.DURABLE) {
      throw ApiException.conflict(
          "invalid_state",
          "Memory " + id + " is " + memory.state().id() + "; only durable memories are merged");
    }
    return memory;
  }

  /** A transition that leaves the state as it is ({@code state}): what reflection did beside it. */
  private static Transition note(
      String id,
      MemoryState state,
      String action,
      String reason,
      String actor,
      ChangeAuthor author,
      Instant at) {
    return new Transition(
        id,
        state,
        state,
        action,
        reason,
        actor,
        author.credentialId(),
        author.userId(),
        author.requestId(),
        at);
  }

  private void published(String memoryId, long change) {
    if (change != 0) {
      index.sync(memoryId);
      index.applied(change);
    }
  }
}
