package io.engram.memory;

import io.engram.platform.WireNames;
import java.util.Optional;

/**
 * What an encode does with a near duplicate of a durable memory of its boundary (embeddings at
 * least {@code similarity} alike, subjects not disagreeing, the same time when the encode names
 * one): write it as any other (keep, the default), reinforce the memory it nearly repeats instead
 * (merge), or stage it as a candidate for review.
 */
public record NearDuplicates(Action action, double similarity) {
  /** From this similarity up (cosine of the memories' embeddings) a memory is a near duplicate. */
  public static final double DEFAULT_SIMILARITY = 0.95;

  public static final double MIN_SIMILARITY = 0.8;
  public static final NearDuplicates DEFAULT = new NearDuplicates(Action.KEEP, DEFAULT_SIMILARITY);

  public enum Action {
    KEEP,
    MERGE,
    CANDIDATE;

    public String id() {
      return WireNames.of(this);
    }

    public static Optional<Action> fromId(String id) {
      return WireNames.parse(Action.class, id);
    }
  }
}
