package io.engram.memory;

import java.time.Instant;

/**
 * One change of a memory's state, as provenance shows it: from and to (from is null at creation),
 * the action that caused it, the caller's reason and actor label, and who called (credential,
 * user) in which request.
 */
public record Transition(
    String memoryId,
    MemoryState from,
    MemoryState to,
    String action,
    String reason,
    String actor,
    String credentialId,
    String userId,
    String requestId,
    Instant at) {

  /** The same transition, of memory {@code id} (an imported memory's history, under its id). */
  public Transition of(String id) {
    return new Transition(id, from, to, action, reason, actor, credentialId, userId, requestId, at);
  }
}
