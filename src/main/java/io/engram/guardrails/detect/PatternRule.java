package io.engram.guardrails.detect;

import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One built-in kind: a pattern that finds candidates and a check that keeps only real ones (a
 * checksum, a range, a count of digits). The patterns are the project's own, written without
 * nested unbounded repetition, so they run in time linear in the text; an organization's patterns
 * run on RE2 instead ({@link RegexDetector}).
 */
record PatternRule(String kind, Pattern pattern, Predicate<String> valid, int longest) {
  static PatternRule of(String kind, String regex, int longest) {
    return new PatternRule(kind, Pattern.compile(regex), text -> true, longest);
  }

  PatternRule checkedBy(Predicate<String> check) {
    return new PatternRule(kind, pattern, check, longest);
  }

  void findIn(String text, List<Finding> into) {
    Matcher matcher = pattern.matcher(text);
    while (matcher.find()) {
      if (valid.test(matcher.group())) {
        into.add(new Finding(kind, matcher.start(), matcher.end()));
      }
    }
  }

  /** How many of {@code text}'s characters are digits. */
  static int digits(String text) {
    int count = 0;
    for (int i = 0; i < text.length(); i++) {
      if (Character.isDigit(text.charAt(i))) {
        count++;
      }
    }
    return count;
  }
}
