package io.engram.guardrails.detect;

/**
 * What a detector found: its kind ({@code email}, {@code payment_card}, {@code openai_key}, a term,
 * a pattern's index) and where, as character offsets into the text ({@code end} exclusive). The
 * matched text itself is never kept beyond the check that found it.
 */
public record Finding(String kind, int start, int end) {
  public Finding {
    if (start < 0 || end <= start) {
      throw new IllegalArgumentException("a finding spans at least one character");
    }
  }

  /** Whether this finding and {@code other} share a character. */
  public boolean overlaps(Finding other) {
    return start < other.end && other.start < end;
  }
}
