package io.engram.memory;

import java.util.List;

/**
 * Which retrieved memories go into a chat's prompt: none unless the best one reaches the
 * organization's relevance floor (a question about something else, "Inspector says hi", gets no
 * memory); then, in rank order and at most {@link #LIMIT}, each memory that scores at least {@link
 * #SHARE_OF_BEST} of the best one's score and at least {@link #MEMBER_FLOOR} (or the
 * organization's floor, where it set a lower one): in a small organization the best memory no
 * longer brings every other one along. The token budget is applied after, by {@link ContextBlock}.
 * Every constant was chosen on the memory development sets with one set left out
 * (bench/context-cut.py, docs/benchmarks.md); more than ten candidates cost 40 % of memory-on
 * throughput.
 */
public final class ContextCut {
  /** Memories retrieved for a chat's block when the request does not say. */
  public static final int LIMIT = 10;

  /** A memory after the best stays out below this share of the best one's score. */
  public static final double SHARE_OF_BEST = 0.4;

  /** A memory after the best stays out below this score (or the organization's lower floor). */
  public static final double MEMBER_FLOOR = 0.35;

  private ContextCut() {}

  /** The memories of {@code ranked} (best first) for the block: a leading run of them, or none. */
  public static List<ActivationRanker.Ranked> apply(
      List<ActivationRanker.Ranked> ranked, double floor) {
    if (ranked.isEmpty() || ranked.getFirst().score() < floor) {
      return List.of();
    }
    double least = Math.max(
        Math.min(MEMBER_FLOOR, floor), SHARE_OF_BEST * ranked.getFirst().score());
    int end = 1;
    while (end < ranked.size() && ranked.get(end).score() >= least) {
      end++;
    }
    return ranked.subList(0, end);
  }
}
