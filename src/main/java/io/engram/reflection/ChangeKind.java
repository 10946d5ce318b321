package io.engram.reflection;

import io.engram.platform.WireNames;
import java.util.Optional;

/**
 * What a reflection change does to a memory. State changes go through the memory state machine
 * (merge, suppress, promote, expire); flags are marks for a reviewer that leave the state alone.
 * Every kind can be undone.
 */
public enum ChangeKind {
  /** Consolidation: a near-duplicate suppressed into the surviving memory, which takes its uses. */
  MERGE(ReflectionProcess.CONSOLIDATION),
  /** Decay: activation stayed below the threshold; flagged stale. */
  FLAG_STALE(ReflectionProcess.DECAY),
  /** Decay: a stale flag lifted because the memory was used again or left the durable state. */
  CLEAR_STALE(ReflectionProcess.DECAY),
  /** Decay, with action suppress: activation stayed below the threshold. */
  SUPPRESS(ReflectionProcess.DECAY),
  /** Candidate evaluation: corroborated or confident enough, made durable. */
  PROMOTE(ReflectionProcess.CANDIDATE_EVALUATION),
  /** Candidate evaluation: unreviewed past the expiry, tombstoned (kept, and undoable). */
  EXPIRE(ReflectionProcess.CANDIDATE_EVALUATION),
  /** Conflict detection: two memories on one subject that contradict each other. */
  FLAG_CONFLICT(ReflectionProcess.CONFLICT_DETECTION),
  /**
   * Conflict detection: of two contradicting memories of one owner that started at different
   * times, the older stops holding when the newer starts (it stays true for the past).
   */
  SUPERSEDE(ReflectionProcess.CONFLICT_DETECTION),
  /** Conflict detection: a conflict flag lifted because one side is no longer durable. */
  CLEAR_CONFLICT(ReflectionProcess.CONFLICT_DETECTION);

  private final ReflectionProcess process;

  ChangeKind(ReflectionProcess process) {
    this.process = process;
  }

  public ReflectionProcess process() {
    return process;
  }

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<ChangeKind> fromId(String id) {
    return WireNames.parse(ChangeKind.class, id);
  }
}
