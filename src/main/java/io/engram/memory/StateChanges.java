package io.engram.memory;

import io.engram.platform.http.ApiException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;

/**
 * The state machine applied inside a write transaction, for a caller's control action and for
 * reflection alike: the {@link MemoryAction}'s rules, the transition for provenance, the new state
 * and the change-log entry that moves the index.
 */
final class StateChanges {
  /** A memory before and after a change; {@code change} is its change-log position, 0 if the index is unaffected. */
  record Outcome(MemoryRecord before, MemoryRecord after, long change) {}

  private final MemoryStore store;
  private final MemoryHistory history;
  private final ChangeLog changeLog;

  StateChanges(MemoryStores stores) {
    this.store = stores.memories();
    this.history = stores.history();
    this.changeLog = stores.changeLog();
  }

  /**
   * Applies the action to the memory; {@code resolve} gets the locked row (empty when there is
   * none) and returns it or refuses (404 outside the caller's boundary, 403 for a shared memory). Repeating a done action changes nothing; any other disallowed start is a 409.
   */
  Outcome apply(
      Handle h,
      String orgId,
      String id,
      MemoryAction action,
      MemoryControl.Control control,
      ChangeAuthor actor,
      Instant now,
      Function<Optional<MemoryRecord>, MemoryRecord> resolve) {
    return apply(h, orgId, id, action, control, actor, now, now, resolve);
  }

  /**
   * The same, a reinforcement's use counted at {@code usedAt} (an encode that repeats a memory
   * and names when it happened: the repetition is evidence of that time, not of now).
   */
  Outcome apply(
      Handle h,
      String orgId,
      String id,
      MemoryAction action,
      MemoryControl.Control control,
      ChangeAuthor actor,
      Instant now,
      Instant usedAt,
      Function<Optional<MemoryRecord>, MemoryRecord> resolve) {
    MemoryRecord memory = resolve.apply(store.findForUpdate(h, orgId, id));
    if (action.isDoneIn(memory.state())) {
      return new Outcome(memory, memory, 0);
    }
    if (!action.startsFrom(memory.state())) {
      throw ApiException.conflict(
          "invalid_state",
          "Cannot " + action.id() + " memory " + id + ": it is "
              + memory.state().id() + ", and " + action.id() + " applies to " + action.allowedFrom()
              + " memories");
    }
    history.recordTransition(
        h,
        new Transition(
            id,
            memory.state(),
            action.to(),
            action.id(),
            control.reason(),
            control.actor(),
            actor.credentialId(),
            actor.userId(),
            actor.requestId(),
            now));
    long change = 0;
    if (action == MemoryAction.REINFORCE) {
      history.recordUse(h, id, UseKind.REINFORCE, usedAt, actor.requestId());
      store.updateUses(
          h,
          id,
          memory.uses().plus(UseKind.REINFORCE, usedAt),
          memory.counts().plusReinforcement());
    } else {
      store.updateState(h, id, action.to(), now);
      change = changeLog.append(h, id, now);
    }
    return new Outcome(memory, store.findForUpdate(h, orgId, id).orElseThrow(), change);
  }

  /** Logs a change of a memory that is no state change (its validity): the nodes follow it. */
  long logged(Handle h, String id, Instant now) {
    return changeLog.append(h, id, now);
  }

  /**
   * Takes a memory back to the state it had before a change, provided nothing moved it since
   * (it is still {@code expected}); otherwise a 409 that says where it is now.
   */
  Outcome revert(
      Handle h,
      String orgId,
      String id,
      MemoryState expected,
      MemoryState back,
      MemoryControl.Control control,
      ChangeAuthor actor,
      Instant now) {
    MemoryRecord memory = store
        .findForUpdate(h, orgId, id)
        .orElseThrow(() -> ApiException.notFound("Memory " + id + " not found"));
    if (memory.state() != expected) {
      throw ApiException.conflict(
          "memory_changed",
          "Memory " + id + " is " + memory.state().id() + " now, not " + expected.id()
              + " as the change left it; undo it by hand if it is still wanted");
    }
    history.recordTransition(
        h,
        new Transition(
            id,
            memory.state(),
            back,
            "undo",
            control.reason(),
            control.actor(),
            actor.credentialId(),
            actor.userId(),
            actor.requestId(),
            now));
    store.updateState(h, id, back, now);
    long change = changeLog.append(h, id, now);
    return new Outcome(memory, store.findForUpdate(h, orgId, id).orElseThrow(), change);
  }
}
