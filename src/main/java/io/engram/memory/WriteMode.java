package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Optional;

/** How encode lands: durable at once (the default), or as a candidate awaiting review. */
public enum WriteMode {
  DIRECT,
  CANDIDATE_REVIEW;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<WriteMode> fromId(String id) {
    return WireNames.parse(WriteMode.class, id);
  }
}
