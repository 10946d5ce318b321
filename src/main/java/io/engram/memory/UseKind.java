package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Optional;

/**
 * The uses that feed a memory's activation, each with its weight. Reinforcement is an explicit
 * "this helped" and counts most; being retrieved counts least, so that what is already retrieved
 * often does not crowd out the rest by its own momentum.
 */
public enum UseKind {
  ENCODE('e', 1.0),
  REINFORCE('r', 2.0),
  RETRIEVAL('q', 0.2);

  private final char code;
  private final double weight;

  UseKind(char code, double weight) {
    this.code = code;
    this.weight = weight;
  }

  public String id() {
    return WireNames.of(this);
  }

  /** One letter in the compact {@code recent_uses} column. */
  char code() {
    return code;
  }

  public double weight() {
    return weight;
  }

  static Optional<UseKind> fromCode(char code) {
    for (UseKind kind : values()) {
      if (kind.code == code) {
        return Optional.of(kind);
      }
    }
    return Optional.empty();
  }
}
