package io.engram.guardrails.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Findings of several rules over one text, made disjoint. */
public final class Findings {
  private Findings() {}

  /**
   * The findings in the order they start, where two overlap the longer kept (the first listed
   * when as long): a card number is not also a phone number.
   */
  public static List<Finding> disjoint(List<Finding> found) {
    List<Finding> byLength = new ArrayList<>(found);
    byLength.sort(Comparator.comparingInt((Finding f) -> f.start() - f.end()));
    List<Finding> kept = new ArrayList<>();
    for (Finding finding : byLength) {
      if (kept.stream().noneMatch(finding::overlaps)) {
        kept.add(finding);
      }
    }
    kept.sort(Comparator.comparingInt(Finding::start));
    return kept;
  }
}
