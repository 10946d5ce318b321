package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What a memory is. A small closed set, so that filters and prompts can rely on it; the meaning
 * of each is in docs/memory.md.
 */
public enum MemoryKind {
  /** Something true about the subject ("Acme's fiscal year starts in April"). */
  FACT,
  /** How someone likes things done ("Dana prefers short answers"). */
  PREFERENCE,
  /** Something that happened at a time ("Acme upgraded to Growth on 3 May"). */
  EVENT,
  /** A standing rule for the assistant ("Never quote prices without VAT"). */
  INSTRUCTION,
  /** How to do something, step by step. */
  PROCEDURE,
  /** Something noticed but not confirmed; weaker than a fact. */
  OBSERVATION;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<MemoryKind> fromId(String id) {
    return WireNames.parse(MemoryKind.class, id);
  }

  public static String allIds() {
    return Arrays.stream(values()).map(MemoryKind::id).collect(Collectors.joining(", "));
  }
}
