package io.engram.memory;

import io.engram.platform.WireNames;

/** How a memory came to exist: written by a client, or staged from a developer event. */
public enum MemorySource {
  ENCODE,
  EVENT;

  public String id() {
    return WireNames.of(this);
  }
}
