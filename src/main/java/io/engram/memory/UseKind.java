package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Optional;

/**
 * A memory's uses, each with its weight in activation. Reinforcement is an explicit "this helped"
 * and counts most; an answer that drew on the memory ({@link AnswerUse}) counts as much as writing
 * it again. Being retrieved, or put in a prompt, is kept (audit, {@code retrievalCount}) but feeds
 * nothing: a ranking that fed on its own results would answer the same questions differently by
 * the order they came in, and a memory retrieved by unrelated questions would rise by its own
 * momentum (measured: docs/benchmarks.md, "Uses that do not feed on themselves").
 */
public enum UseKind {
  ENCODE('e', 1.0),
  REINFORCE('r', 2.0),
  RETRIEVAL('q', 0.0),
  ANSWER('a', 1.0);

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

  /** Whether the use enters the memory's activation (and so its use history). */
  public boolean feedsActivation() {
    return weight > 0;
  }

  public static Optional<UseKind> fromId(String id) {
    return WireNames.parse(UseKind.class, id);
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
