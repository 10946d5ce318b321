package io.engram.memory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Context around a hit: what is said next to a relevant memory is often what answers the
 * question (a photo shared, then "I painted that lake sunrise"; "who did you see?", then a name).
 * Each of the best {@link #HITS} memories lends its neighbours in time (up to {@link #SIDE} on
 * each side, within {@link #WINDOW}: turns of one conversation, steps of one session) a share of
 * its own score, {@link #SHARE} for the nearest and {@link #STEP} times less per step further; a
 * memory's score becomes the larger of its own and the largest it was lent, and its explanation
 * names the memory that lent it. A neighbour never rises above the hit that lends to it. A hit that
 * asks something lends the memory just after it {@link #ANSWER} instead: a question that matched
 * the query's words is most often answered by the next turn ("How often do you all work out
 * together?", then "Three times a week"), which shares few of them.
 *
 * <p>Measured on LoCoMo (docs/benchmarks.md, with leave-one-conversation-out figures for the
 * share): of the questions whose evidence missed the top 10, most had an evidence turn within two
 * turns of a top-10 hit.
 */
final class ContextSpread {
  static final int HITS = 10;
  static final int SIDE = 2;
  static final double SHARE = RankingWeights.CURRENT.spreadShare();
  static final double STEP = RankingWeights.CURRENT.spreadStep();
  /** What a hit that asks a question lends the memory right after it (tuned on LoCoMo). */
  static final double ANSWER = RankingWeights.CURRENT.answerLend();

  static final Duration WINDOW = Duration.ofMinutes(30);

  private ContextSpread() {}

  /** The best hits, whose neighbours may rise: those to look up before {@link #apply}. */
  static List<ActivationRanker.Ranked> lenders(List<ActivationRanker.Ranked> ranked) {
    return ranked.subList(0, Math.min(HITS, ranked.size()));
  }

  /** The ranking with lent scores applied; {@code neighbours}: each lender's, by its id. */
  static List<ActivationRanker.Ranked> apply(
      List<ActivationRanker.Ranked> ranked, Map<String, List<MemorySearch.Near>> neighbours) {
    Map<String, Double> lent = new HashMap<>();
    Map<String, String> lender = new HashMap<>();
    for (ActivationRanker.Ranked hit : lenders(ranked)) {
      for (MemorySearch.Near near : neighbours.getOrDefault(hit.memory().id(), List.of())) {
        double share =
            hit.score() * (answers(hit, near) ? ANSWER : SHARE * Math.pow(STEP, near.steps() - 1));
        String id = near.memoryId();
        if (share > lent.getOrDefault(id, 0.0)) {
          lent.put(id, share);
          lender.put(id, hit.memory().id());
        }
      }
    }
    if (lent.isEmpty()) {
      return ranked;
    }
    List<ActivationRanker.Ranked> spread = new ArrayList<>(ranked.size());
    for (ActivationRanker.Ranked r : ranked) {
      double share = lent.getOrDefault(r.memory().id(), 0.0);
      spread.add(
          share > r.score()
              ? new ActivationRanker.Ranked(
                  r.memory(), r.explanation().lentBy(lender.get(r.memory().id()), share))
              : r);
    }
    spread.sort(ActivationRanker.ORDER);
    return spread;
  }

  /** Whether the neighbour is the memory right after a hit that asks a question. */
  private static boolean answers(ActivationRanker.Ranked hit, MemorySearch.Near near) {
    return near.after() && near.steps() == 1 && hit.memory().text().indexOf('?') >= 0;
  }
}
