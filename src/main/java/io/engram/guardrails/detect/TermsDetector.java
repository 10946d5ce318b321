package io.engram.guardrails.detect;

import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;

/**
 * An organization's terms: each found as a whole word or phrase, whatever its case ("Project
 * Falcon" finds "project falcon" but not "falconry"). Findings name the term's index ({@code
 * term_0}), never the term, so a log of what fired does not repeat a confidential word.
 */
public final class TermsDetector implements Detector {
  private final List<String> terms;
  private final int longest;

  public TermsDetector(List<String> terms) {
    this.terms = terms.stream().map(TermsDetector::folded).toList();
    this.longest = terms.stream().mapToInt(String::length).max().orElse(1);
  }

  @Override
  public List<Finding> find(String text) {
    String folded = folded(text);
    // Case folding keeps the length of the text for the scripts it changes (NFC, then lower case
    // per character), so offsets in the folded text are offsets in the text.
    if (folded.length() != text.length()) {
      folded = text;
    }
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

  @Override
  public int longestMatch() {
    return longest;
  }

  private static boolean boundary(String text, int index) {
    return index < 0 || index >= text.length() || !Character.isLetterOrDigit(text.charAt(index));
  }

  private static String folded(String text) {
    String composed = Normalizer.normalize(text, Normalizer.Form.NFC);
    StringBuilder lower = new StringBuilder(composed.length());
    for (int i = 0; i < composed.length(); i++) {
      lower.append(Character.toLowerCase(composed.charAt(i)));
    }
    return lower.toString();
  }
}
