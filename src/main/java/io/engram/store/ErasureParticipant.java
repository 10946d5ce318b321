package io.engram.store;

import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * A store outside the memory that an erasure reaches: conversation history, stored responses, the
 * request log's messages, cached answers, snapshots. Each module that keeps such data registers
 * one (the memory's {@code Erasures.include}); an erasure calls every one after the memories are erased, and
 * again if it is run again (each must be safe to call twice).
 */
public interface ErasureParticipant {

  /** What is erased: the organization, the boundary (null: every agent, every user), the memories. */
  record Target(
      String erasureId, String orgId, String agent, String endUser, Set<String> memoryIds) {}

  /** One store's part: its name, how many things it removed, and what it did to them. */
  record Removed(String store, long count, String how) {}

  /** A copy the erasure cannot change (a snapshot) taken before it, and until when it is kept. */
  record Holding(String store, String id, Instant takenAt, Instant expiresAt) {}

  /** Removes the target's data from this store. */
  List<Removed> erase(Target target);

  /**
   * Copies of the organization's data made between {@code since} (the first erased memory was
   * made: an older copy cannot hold any) and {@code before} (the erasure) that still hold it.
   */
  default List<Holding> stillHolding(String orgId, Instant since, Instant before) {
    return List.of();
  }
}
