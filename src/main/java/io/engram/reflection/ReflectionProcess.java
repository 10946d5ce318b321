package io.engram.reflection;

import io.engram.platform.WireNames;
import java.util.Optional;

/** The four processes a reflection run performs, in the order they are planned. */
public enum ReflectionProcess {
  CANDIDATE_EVALUATION,
  CONFLICT_DETECTION,
  CONSOLIDATION,
  DECAY;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<ReflectionProcess> fromId(String id) {
    return WireNames.parse(ReflectionProcess.class, id);
  }
}
