package io.engram.guardrails;

import java.util.Arrays;
import java.util.Optional;

/** Where a guardrail looks: what goes to a model, what comes back, what enters and leaves memory. */
public enum Phase {
  /** A request's messages (or prompt) before any provider sees them. */
  INPUT("input"),
  /** The model's answer before the client does. */
  OUTPUT("output"),
  /** A memory's text before it is stored, on every write path. */
  MEMORY_WRITE("memory_write"),
  /** Each memory of a chat's memory block before it enters the chat. */
  MEMORY_INJECTION("memory_injection");

  private final String id;

  Phase(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  public static Optional<Phase> fromId(String id) {
    return Arrays.stream(values()).filter(p -> p.id.equals(id)).findFirst();
  }
}
