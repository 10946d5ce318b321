package io.engram.instances;

import io.engram.instances.snapshots.Snapshots;
import io.engram.instances.storage.ConversationHistory;
import io.engram.store.ErasureParticipant;
import java.time.Instant;
import java.util.List;

/**
 * Storage's part of an erasure: an erased end user's conversation history (every exchange the
 * gateway kept for them, those still queued first written, then deleted); and the snapshots
 * taken before, which keep what they copied until they expire and are listed on the receipt as
 * still holding it.
 */
final class StorageErasure implements ErasureParticipant {
  private final ConversationHistory history;
  private final Snapshots snapshots;

  StorageErasure(ConversationHistory history, Snapshots snapshots) {
    this.history = history;
    this.snapshots = snapshots;
  }

  @Override
  public List<Removed> erase(Target target) {
    if (target.endUser() == null) {
      return List.of(new Removed(
          "conversation history", 0, "not selected: only an end user's exchanges are erased"));
    }
    history.flush();
    return List.of(new Removed(
        "conversation history",
        history.deleteOf(target.orgId(), target.endUser()),
        "the end user's exchanges deleted"));
  }

  @Override
  public List<Holding> stillHolding(String orgId, Instant since, Instant before) {
    return snapshots.holding(orgId, before).stream()
        .filter(s -> !s.createdAt().isBefore(since))
        .map(s -> new Holding("snapshots", s.id(), s.createdAt(), s.expiresAt()))
        .toList();
  }
}
