package io.engram.guardrails;

import io.engram.guardrails.detect.Detector;
import io.engram.guardrails.detect.Finding;
import io.engram.guardrails.detect.Findings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The organization's output guardrails over one answer as it comes, a piece at a time: what may
 * go on to the client now ({@link #take}), and the rest once the answer ends ({@link #finish}). A
 * whole answer is one piece and its end.
 *
 * <p>Text is held back only as long as what follows could still change what fires: the last
 * {@link Detector#reach() reach} characters of the guardrails that cover the answer (an email's
 * 326 for PII, a term's length for terms), and a finding that runs to the end of what has come (a
 * token still being written) from its start. What is let go is let go whole: a finding is never
 * cut in two, a redaction replaces it before it leaves, and a block stops the answer before any of
 * the blocked text is let go. Each piece is screened with the last {@link #CONTEXT} characters let
 * go before it, so a pattern's look-behind sees what it would in the whole text.
 */
public final class AnswerScreen {
  /** How much text already let go the next screen still sees, for look-behinds. */
  static final int CONTEXT = 64;

  private final List<Guardrail> guardrails;
  private final Placeholders placeholders;
  private final Consumer<Screening.Firing> counted;
  private final int holdback;
  /** The text seen: the context let go (at most CONTEXT), then what is held back. */
  private final StringBuilder seen = new StringBuilder();
  /** Where the held-back text starts in {@link #seen}. */
  private int held;

  private final Map<Guardrail, Set<String>> fired = new LinkedHashMap<>();
  private Screening.Firing blockedBy;

  AnswerScreen(
      List<Guardrail> guardrails, Placeholders placeholders, Consumer<Screening.Firing> counted) {
    this.guardrails = List.copyOf(guardrails);
    this.placeholders = placeholders;
    this.counted = counted;
    this.holdback =
        guardrails.stream().mapToInt(g -> g.detector().reach()).max().orElse(0);
  }

  /** How many characters the answer is held back by, at most, while nothing is found. */
  public int holdback() {
    return holdback;
  }

  /**
   * Takes the next piece of the answer; what may go on to the client now (often "", while it is
   * held), or null once a guardrail blocked the answer ({@link #blockedBy()}).
   */
  public String take(String piece) {
    if (blockedBy != null) {
      return null;
    }
    seen.append(piece);
    if (holdback != Detector.WHOLE_TEXT && seen.length() - held > holdback) {
      return screen(false);
    }
    return "";
  }

  /** The rest of the answer at its end, screened; null when a guardrail blocked it. */
  public String finish() {
    return blockedBy != null ? null : screen(true);
  }

  /** The guardrail that blocked the answer, or null. */
  public Screening.Firing blockedBy() {
    return blockedBy;
  }

  /** Every guardrail that fired on the answer so far, with the kinds it found. */
  public List<Screening.Firing> firings() {
    List<Screening.Firing> firings = new ArrayList<>();
    fired.forEach(
        (g, kinds) -> firings.add(new Screening.Firing(g, Phase.OUTPUT, Set.copyOf(kinds))));
    return firings;
  }

  /** Lets go what the findings allow: all of it at the end, else up to the held-back tail. */
  private String screen(boolean end) {
    String window = seen.toString();
    int length = window.length();
    List<List<Finding>> found = new ArrayList<>(guardrails.size());
    for (Guardrail guardrail : guardrails) {
      List<Finding> mine = new ArrayList<>();
      for (Finding finding : guardrail.detector().find(window)) {
        if (finding.start() >= held) { // one that starts in the context was let go already
          mine.add(finding);
        }
      }
      found.add(mine);
    }
    int cut = end ? length : Math.max(held, length - holdback);
    for (boolean moved = !end; moved; ) {
      moved = false;
      for (List<Finding> findings : found) {
        for (Finding f : findings) {
          // Neither cut in two nor let go while it may still grow: held from its start.
          if (f.start() < cut && (f.end() > cut || f.end() >= length)) {
            cut = f.start();
            moved = true;
          }
        }
      }
    }
    if (cut <= held) {
      return "";
    }
    List<Finding> redacted = new ArrayList<>();
    for (int g = 0; g < guardrails.size(); g++) {
      Guardrail guardrail = guardrails.get(g);
      Set<String> kinds = new TreeSet<>();
      for (Finding f : found.get(g)) {
        if (f.end() <= cut) {
          kinds.add(Screening.kindOf(f.kind()));
          if (guardrail.action() == Action.REDACT) {
            redacted.add(f);
          }
        }
      }
      if (kinds.isEmpty()) {
        continue;
      }
      boolean first = !fired.containsKey(guardrail);
      fired.computeIfAbsent(guardrail, k -> new TreeSet<>()).addAll(kinds);
      Screening.Firing firing = new Screening.Firing(guardrail, Phase.OUTPUT, kinds);
      if (first) {
        counted.accept(firing);
      }
      if (firing.action() == Action.BLOCK) {
        blockedBy = firing;
        return null;
      }
    }
    String out = window.substring(held, cut);
    if (!redacted.isEmpty()) {
      List<Finding> shifted = new ArrayList<>();
      Findings.disjoint(redacted)
          .forEach(f -> shifted.add(new Finding(f.kind(), f.start() - held, f.end() - held)));
      out = placeholders.redact(out, shifted, false); // the model's own text: nothing to give back
    }
    int keepFrom = Math.max(0, cut - CONTEXT);
    seen.delete(0, keepFrom);
    held = cut - keepFrom;
    return out;
  }
}
