package io.engram.memory;

import java.util.List;

/**
 * Which retrieved memories go into a chat's prompt: none unless the best one reaches the
 * organization's relevance floor (a question about something else, "Inspector says hi", gets no
 * memory), else the best {@link #LIMIT} in rank order; the token budget is applied after, by
 * {@link ContextBlock}. The floor's default and the limit were chosen on the memory development
 * sets with one set left out (bench/context-cut.py, docs/benchmarks.md); a further cut where the
 * scores fall below a share of the best was measured and not chosen (it lost evidence for the
 * tokens it saved among ten), and more than ten candidates cost 40 % of memory-on throughput.
 */
public final class ContextCut {
  /** Memories retrieved for a chat's block when the request does not say. */
  public static final int LIMIT = 10;

  private ContextCut() {}

  /** The memories of {@code ranked} (best first) for the block: all of them, or none. */
  public static List<ActivationRanker.Ranked> apply(
      List<ActivationRanker.Ranked> ranked, double floor) {
    return ranked.isEmpty() || ranked.getFirst().score() < floor ? List.of() : ranked;
  }
}
