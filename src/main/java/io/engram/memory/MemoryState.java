package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Optional;

/**
 * The spec's four states. Only durable memories are in the retrieval index; the others are kept
 * in the database for review, provenance and audit.
 */
public enum MemoryState {
  CANDIDATE,
  DURABLE,
  SUPPRESSED,
  TOMBSTONED;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<MemoryState> fromId(String id) {
    return WireNames.parse(MemoryState.class, id);
  }
}
