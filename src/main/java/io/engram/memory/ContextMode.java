package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * How the context block is written. {@code full}: one line per memory with its kind, subject,
 * date and confidence, under a short instruction. {@code compact}: the memories' text only, one
 * per line, for tight budgets.
 */
public enum ContextMode {
  FULL,
  COMPACT;

  public String id() {
    return WireNames.of(this);
  }

  public static Optional<ContextMode> fromId(String id) {
    return WireNames.parse(ContextMode.class, id);
  }

  public static String allIds() {
    return Arrays.stream(values()).map(ContextMode::id).collect(Collectors.joining(", "));
  }
}
