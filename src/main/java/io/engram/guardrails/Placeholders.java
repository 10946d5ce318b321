package io.engram.guardrails;

import io.engram.guardrails.detect.Finding;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The typed placeholders of one conversation ({@code [EMAIL_1]}, {@code [EMAIL_2]}): one per
 * distinct value and kind, numbered in order of appearance, the same value the same placeholder
 * in every text, step and answer of the conversation. Those a guardrail with {@code restore} made
 * are remembered with their originals, so the client's answer can have them back.
 */
public final class Placeholders {
  private final Map<String, String> byValue = new HashMap<>();
  private final Map<String, Integer> counts = new HashMap<>();
  private final Map<String, String> restorable = new LinkedHashMap<>();

  /** {@code text} with each of {@code found} (disjoint, in order) replaced by its placeholder. */
  synchronized String redact(String text, List<Finding> found, boolean restore) {
    StringBuilder out = new StringBuilder(text.length());
    int at = 0;
    for (Finding finding : found) {
      out.append(text, at, finding.start());
      String label = Screening.kindOf(finding.kind()).toUpperCase(Locale.ROOT);
      String value = text.substring(finding.start(), finding.end());
      String placeholder = byValue.computeIfAbsent(
          label + '\u0000' + value,
          key -> "[" + label + "_" + counts.merge(label, 1, Integer::sum) + "]");
      if (restore) {
        restorable.put(placeholder, value);
      }
      out.append(placeholder);
      at = finding.end();
    }
    return out.append(text, at, text.length()).toString();
  }

  /** The placeholders to give back in the answer, with their originals (a copy). */
  public synchronized Map<String, String> restorable() {
    return Map.copyOf(restorable);
  }
}
