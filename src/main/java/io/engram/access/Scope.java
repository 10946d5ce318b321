package io.engram.access;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/** Scopes a context access token can carry. */
public enum Scope {
  MEMORY_READ("memory:read"),
  MEMORY_WRITE("memory:write"),
  MEMORY_CONTROL("memory:control"),
  MEMORY_DELETE("memory:delete"),
  KNOWLEDGE_READ("knowledge:read"),
  INSIGHTS_READ("insights:read"),
  ACTIONS_REQUEST("actions:request"),
  INFERENCE_CHAT("inference:chat");

  private final String wireName;

  Scope(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Optional<Scope> fromWire(String value) {
    return Arrays.stream(values()).filter(s -> s.wireName.equals(value)).findFirst();
  }

  public static String allWireNames() {
    return Arrays.stream(values()).map(Scope::wireName).collect(Collectors.joining(", "));
  }
}
