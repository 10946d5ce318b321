package io.engram.guardrails.detect;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One built-in kind: a pattern that finds candidates and a check that keeps only real ones (a
 * checksum, a range, a count of digits). The patterns are the project's own, written without
 * nested unbounded repetition, so they run in time linear in the text; an organization's patterns
 * run on RE2 instead ({@link RegexDetector}).
 */
record PatternRule(
    String kind,
    Pattern pattern,
    Predicate<String> valid,
    Predicate<String> may,
    Function<String, List<int[]>> windows) {
  private static final Function<String, List<int[]>> WHOLE =
      text -> List.of(new int[] {0, text.length()});

  static PatternRule of(String kind, String regex) {
    return of(kind, Pattern.compile(regex));
  }

  static PatternRule of(String kind, Pattern pattern) {
    return new PatternRule(kind, pattern, text -> true, text -> true, WHOLE);
  }

  PatternRule checkedBy(Predicate<String> check) {
    return new PatternRule(kind, pattern, check, may, windows);
  }

  /**
   * Runs the pattern only in {@code spans} of the text (its match needs what they hold), each
   * seen through transparent bounds so the pattern's look-arounds see the text around it.
   */
  PatternRule within(Function<String, List<int[]>> spans) {
    return new PatternRule(kind, pattern, valid, may, spans);
  }

  /**
   * The spans of digits and the separators numbers are written with (space, ( ) + - . /) that
   * hold at least {@code count} digits: where a card, a phone, an SSN or an IP address can be.
   */
  static Function<String, List<int[]>> digitRuns(int count) {
    return text -> {
      List<int[]> spans = new ArrayList<>();
      int start = -1;
      int digits = 0;
      for (int i = 0; i <= text.length(); i++) {
        char c = i < text.length() ? text.charAt(i) : 'x';
        boolean digit = c >= '0' && c <= '9';
        if (digit || (start >= 0 && " ()+-./".indexOf(c) >= 0)) {
          if (start < 0) {
            start = i;
            digits = 0;
          }
          digits += digit ? 1 : 0;
          continue;
        }
        if (start >= 0 && digits >= count) {
          // One character before: a phone's "(" or "+" opens it before its first digit.
          spans.add(new int[] {Math.max(0, start - 1), i});
        }
        start = -1;
      }
      return spans;
    };
  }

  /** The spans around each {@code literal}: {@code before} characters ahead, {@code after} on. */
  static Function<String, List<int[]>> around(String literal, int before, int after) {
    return text -> {
      List<int[]> spans = new ArrayList<>();
      for (int at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + 1)) {
        int start = Math.max(0, at - before);
        int end = Math.min(text.length(), at + literal.length() + after);
        if (!spans.isEmpty() && spans.getLast()[1] >= start) {
          spans.getLast()[1] = end;
        } else {
          spans.add(new int[] {start, end});
        }
      }
      return spans;
    };
  }

  /**
   * The spans around each occurrence of any of {@code literals}: {@code before} characters ahead
   * (from where a match starts to its literal), {@code after} on (the longest match past it).
   */
  static Function<String, List<int[]>> aroundAny(int before, int after, String... literals) {
    return text -> {
      List<int[]> found = new ArrayList<>();
      for (String literal : literals) {
        for (int at = text.indexOf(literal); at >= 0; at = text.indexOf(literal, at + 1)) {
          found.add(new int[] {
            Math.max(0, at - before), Math.min(text.length(), at + literal.length() + after)
          });
        }
      }
      found.sort(java.util.Comparator.comparingInt(span -> span[0]));
      List<int[]> spans = new ArrayList<>();
      for (int[] span : found) {
        if (!spans.isEmpty() && spans.getLast()[1] >= span[0]) {
          spans.getLast()[1] = Math.max(spans.getLast()[1], span[1]);
        } else {
          spans.add(span);
        }
      }
      return spans;
    };
  }

  /**
   * Runs the pattern only over a text that passes {@code test}, a cheap look for what every
   * match holds (a literal, enough digits): a regex costs some 25 ns a character wherever it
   * starts, an indexOf a fraction of that, and most texts hold no candidate at all.
   */
  PatternRule onlyWhere(Predicate<String> test) {
    return new PatternRule(kind, pattern, valid, test, windows);
  }

  /** A test that passes a text holding one of {@code literals}. */
  static Predicate<String> holding(String... literals) {
    return text -> {
      for (String literal : literals) {
        if (text.contains(literal)) {
          return true;
        }
      }
      return false;
    };
  }

  /** A test that passes a text holding at least {@code count} digits. */
  static Predicate<String> digitsAtLeast(int count) {
    return text -> {
      int seen = 0;
      for (int i = 0; i < text.length() && seen < count; i++) {
        char c = text.charAt(i);
        seen += c >= '0' && c <= '9' ? 1 : 0;
      }
      return seen >= count;
    };
  }

  /** Every rule's findings in {@code text}, made disjoint. */
  static List<Finding> findAll(List<PatternRule> rules, String text) {
    List<Finding> found = new ArrayList<>();
    rules.forEach(rule -> rule.findIn(text, found));
    return Findings.disjoint(found);
  }

  void findIn(String text, List<Finding> into) {
    if (!may.test(text)) {
      return;
    }
    Matcher matcher = pattern.matcher(text).useTransparentBounds(true).useAnchoringBounds(false);
    for (int[] span : windows.apply(text)) {
      matcher.region(span[0], span[1]);
      while (matcher.find()) {
        if (valid.test(matcher.group())) {
          into.add(new Finding(kind, matcher.start(), matcher.end()));
        } else if (matcher.start() + 1 < span[1]) {
          // A candidate that fails its check may hide a real one inside it (a phone's digits
          // run on into a card's): look again from the next character, not after the candidate.
          matcher.region(matcher.start() + 1, span[1]);
        }
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
