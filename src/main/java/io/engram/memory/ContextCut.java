package io.engram.memory;

import java.util.List;

/**
 * Which retrieved memories go into a chat's prompt. None unless the best one reaches the
 * organization's relevance floor (a question about something else, "Inspector says hi", gets no
 * memory); then the memories in rank order while each scores at least {@link #RATIO} of the best,
 * so the block ends where the scores fall rather than at a fixed count. The token budget is
 * applied after, by {@link ContextBlock}. The floor's default and the ratio were chosen on the
 * memory development sets with one set left out (bench/context-cut.py, docs/benchmarks.md).
 */
public final class ContextCut {
  /** A memory scoring below this share of the best one stays out of the block. */
  public static final double RATIO = 0.6;
  /** Memories retrieved for a chat's block when the request does not say. */
  public static final int LIMIT = 30;

  private ContextCut() {}

  /** The memories of {@code ranked} (best first) that pass the floor and the ratio. */
  public static List<ActivationRanker.Ranked> apply(
      List<ActivationRanker.Ranked> ranked, double floor) {
    if (ranked.isEmpty() || ranked.getFirst().score() < floor) {
      return List.of();
    }
    double least = RATIO * ranked.getFirst().score();
    int end = 1;
    while (end < ranked.size() && ranked.get(end).score() >= least) {
      end++;
    }
    return ranked.subList(0, end);
  }
}
