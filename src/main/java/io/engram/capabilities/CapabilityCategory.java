package io.engram.capabilities;

import io.engram.platform.WireNames;
import java.util.Optional;

/** The categories the available-capabilities response groups by; the four the spec shows. */
public enum CapabilityCategory {
  ORG_INTELLIGENCE,
  COMMERCE,
  PRODUCTIVITY,
  INTELLIGENCE;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<CapabilityCategory> fromId(String id) {
    return WireNames.parse(CapabilityCategory.class, id);
  }
}
