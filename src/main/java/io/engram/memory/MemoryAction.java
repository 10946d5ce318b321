package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Set;

/**
 * The control actions and the state machine they drive: from which states each may start, the
 * state it leads to, and the states in which repeating it changes nothing (answered 200, with no
 * new transition, so a retried request is harmless). Any other starting state is a 409.
 */
public enum MemoryAction {
  REINFORCE(Set.of(MemoryState.DURABLE), MemoryState.DURABLE, Set.of(), false),
  SUPPRESS(
      Set.of(MemoryState.DURABLE), MemoryState.SUPPRESSED, Set.of(MemoryState.SUPPRESSED), true),
  RESTORE(Set.of(MemoryState.SUPPRESSED), MemoryState.DURABLE, Set.of(), true),
  APPROVE(Set.of(MemoryState.CANDIDATE), MemoryState.DURABLE, Set.of(), true),
  REJECT(Set.of(MemoryState.CANDIDATE), MemoryState.TOMBSTONED, Set.of(), true),
  DELETE(
      Set.of(MemoryState.DURABLE, MemoryState.SUPPRESSED, MemoryState.CANDIDATE),
      MemoryState.TOMBSTONED,
      Set.of(MemoryState.TOMBSTONED),
      true),
  /** Reflection only: a near-duplicate absorbed by another memory, which takes over its uses. */
  MERGE(Set.of(MemoryState.DURABLE), MemoryState.SUPPRESSED, Set.of(), true),
  /** Reflection only: a candidate nobody reviewed within the organization's expiry. */
  EXPIRE(Set.of(MemoryState.CANDIDATE), MemoryState.TOMBSTONED, Set.of(), true);

  private final Set<MemoryState> from;
  private final MemoryState to;
  private final Set<MemoryState> alreadyDone;
  private final boolean changesContent;

  MemoryAction(
      Set<MemoryState> from, MemoryState to, Set<MemoryState> alreadyDone, boolean changesContent) {
    this.from = from;
    this.to = to;
    this.alreadyDone = alreadyDone;
    this.changesContent = changesContent;
  }

  public String id() {
    return WireNames.of(this);
  }

  boolean startsFrom(MemoryState state) {
    return from.contains(state);
  }

  boolean isDoneIn(MemoryState state) {
    return alreadyDone.contains(state);
  }

  public MemoryState to() {
    return to;
  }

  /** Whether the action changes what the memory says or whether it is used (not allowed on shared memories from inside an agent). */
  boolean changesContent() {
    return changesContent;
  }

  String allowedFrom() {
    return String.join(" or ", from.stream().map(MemoryState::id).sorted().toList());
  }
}
