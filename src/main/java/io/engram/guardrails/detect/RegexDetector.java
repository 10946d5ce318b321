package io.engram.guardrails.detect;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.List;

/**
 * An organization's patterns, run by RE2 (re2j): time linear in the text whatever the pattern, so
 * a catastrophic one cannot stall a node. Findings name the pattern's index ({@code pattern_0}).
 */
public final class RegexDetector implements Detector {
  /** The longest pattern an organization may write, in characters. */
  public static final int MAX_PATTERN_CHARS = 1_000;

  private final List<Pattern> patterns;

  private RegexDetector(List<Pattern> patterns) {
    this.patterns = patterns;
  }

  /** The patterns compiled, or the first that is not RE2 syntax (its index and RE2's reason). */
  public static RegexDetector compile(List<String> sources) {
    List<Pattern> compiled = new ArrayList<>();
    for (int i = 0; i < sources.size(); i++) {
      try {
        compiled.add(Pattern.compile(sources.get(i)));
      } catch (PatternSyntaxException e) {
        throw new InvalidPattern(i, e.getDescription());
      }
    }
    return new RegexDetector(List.copyOf(compiled));
  }

  /** A pattern RE2 does not take. */
  public static final class InvalidPattern extends RuntimeException {
    private final int index;

    InvalidPattern(int index, String reason) {
      super(reason, null, false, false);
      this.index = index;
    }

    public int index() {
      return index;
    }
  }

  /**
   * An organization's pattern may match any length: in a streamed answer, its matches are caught
   * when they span at most this many characters (docs/guardrails.md); a whole answer is screened
   * whole.
   */
  public static final int STREAMED_REACH = 256;

  @Override
  public int reach() {
    return STREAMED_REACH;
  }

  @Override
  public List<Finding> find(String text) {
    List<Finding> found = new ArrayList<>();
    for (int p = 0; p < patterns.size(); p++) {
      Matcher matcher = patterns.get(p).matcher(text);
      while (matcher.find()) {
        if (matcher.end() > matcher.start()) {
          found.add(new Finding("pattern_" + p, matcher.start(), matcher.end()));
        }
      }
    }
    return Findings.disjoint(found);
  }
}
