package io.engram.guardrails;

import java.util.Arrays;
import java.util.Optional;

/** What a guardrail that fires does. */
public enum Action {
  /** Refuses the request (or the answer, or the write); the memory is left out of the block. */
  BLOCK("block"),
  /** Replaces each finding by a typed placeholder ({@code [EMAIL_1]}) and lets the rest through. */
  REDACT("redact"),
  /** Lets everything through and records that it fired. */
  FLAG("flag");

  private final String id;

  Action(String id) {
    this.id = id;
  }

  public String id() {
    return id;
  }

  public static Optional<Action> fromId(String id) {
    return Arrays.stream(values()).filter(a -> a.id.equals(id)).findFirst();
  }
}
