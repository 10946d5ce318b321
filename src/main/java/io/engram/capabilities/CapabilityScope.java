package io.engram.capabilities;

import io.engram.platform.WireNames;
import java.util.Optional;

/** Which assistants a capability may be assigned to (validation rules 1 to 3). */
public enum CapabilityScope {
  ORGANIZATION,
  USER,
  BOTH;

  public String id() {
    return WireNames.of(this);
  }

  public boolean allows(AssistantType type) {
    return switch (this) {
      case ORGANIZATION -> type == AssistantType.ORG_SHARED;
      case USER -> type == AssistantType.EMPLOYEE_PERSONAL;
      case BOTH -> true;
    };
  }

  public static Optional<CapabilityScope> fromId(String id) {
    return WireNames.parse(CapabilityScope.class, id);
  }
}
