package io.engram.guardrails.detect;

import java.util.ArrayList;
import java.util.List;

/**
 * An organization's terms: each found as a whole word or phrase, whatever its case ("Project
 * Falcon" finds "project falcon" but not "falconry"). Findings name the term's index ({@code
 * term_0}), never the term, so a log of what fired does not repeat a confidential word.
 */
public final class TermsDetector implements Detector {
  private final List<String> terms;

  public TermsDetector(List<String> terms) {
    this.terms = terms.stream().map(TermsDetector::folded).toList();
  }

  /** The longest term and a boundary character on each side. */
  @Override
  public int reach() {
    return terms.stream().mapToInt(String::length).max().orElse(0) + 2;
  }

  @Override
  public List<Finding> find(String text) {
    String folded = folded(text);
    List<Finding> found = new ArrayList<>();
    for (int t = 0; t < terms.size(); t++) {
      String term = terms.get(t);
      for (int at = folded.indexOf(term); at >= 0; at = folded.indexOf(term, at + 1)) {
        int end = at + term.length();
        if (boundary(folded, at - 1) && boundary(folded, end)) {
          found.add(new Finding("term_" + t, at, end));
        }
      }
    }
    return Findings.disjoint(found);
  }

  private static boolean boundary(String text, int index) {
    return index < 0 || index >= text.length() || !Character.isLetterOrDigit(text.charAt(index));
  }

  /**
   * Lower case a character at a time: the folded text keeps the text's length, so an offset in
   * one is the same offset in the other (String.toLowerCase may change the length, "İ" for one).
   */
  private static String folded(String text) {
    StringBuilder lower = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      lower.append(Character.toLowerCase(text.charAt(i)));
    }
    return lower.toString();
  }
}
