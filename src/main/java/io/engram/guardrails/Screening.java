package io.engram.guardrails;

import io.engram.guardrails.detect.Finding;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What an organization's guardrails of one phase made of some texts: the texts as they go on
 * (redacted where a guardrail redacts), every guardrail that fired with the kinds it found (never
 * the text), and the one that blocks, if any. Redaction gives each distinct value a typed
 * placeholder numbered per kind ({@code [EMAIL_1]}, {@code [EMAIL_2]}), the same value the same
 * placeholder across the texts of one request.
 */
public record Screening(List<String> texts, List<Firing> firings, Firing blockedBy) {
  /** One guardrail that fired, where, what it did, and the kinds of what it found. */
  public record Firing(Guardrail guardrail, Phase phase, Set<String> kinds) {
    /** The guardrail's action; a block where its webhook could not answer and blocks then. */
    public Action action() {
      return kinds.contains(Webhooks.UNAVAILABLE) ? Action.BLOCK : guardrail.action();
    }

    /** As the X-Engram-Guardrails header tells it: id, phase, action and kinds. */
    public String told() {
      return guardrail.id() + ";phase=" + phase.id() + ";action=" + action().id() + ";kinds="
          + String.join(" ", kinds);
    }
  }

  /** Firings as the X-Engram-Guardrails header tells them, comma-separated. */
  public static String told(List<Firing> firings) {
    return String.join(", ", firings.stream().map(Firing::told).toList());
  }

  /** A text to screen, and whether it is the user's own turn (injection checks skip those). */
  public record Text(String text, boolean usersOwn) {}

  public boolean blocked() {
    return blockedBy != null;
  }

  public boolean fired() {
    return !firings.isEmpty();
  }

  /** Runs {@code guardrails} (each covering the phase and the request) over {@code texts}. */
  static Screening of(
      Phase phase, List<Guardrail> guardrails, List<Text> texts, Placeholders placeholders) {
    List<String> current = new ArrayList<>(texts.size());
    texts.forEach(t -> current.add(t.text()));
    List<Firing> firings = new ArrayList<>();
    for (Guardrail guardrail : guardrails) {
      boolean injection = guardrail.check() instanceof Check.PromptInjection;
      Set<String> kinds = new TreeSet<>();
      for (int i = 0; i < current.size(); i++) {
        if (injection && texts.get(i).usersOwn()) {
          continue;
        }
        List<Finding> found = guardrail.detector().find(current.get(i));
        if (found.isEmpty()) {
          continue;
        }
        found.forEach(f -> kinds.add(kindOf(f.kind())));
        if (guardrail.action() == Action.REDACT) {
          current.set(
              i, placeholders.redact(current.get(i), found, guardrail.spec().restore()));
        }
      }
      if (!kinds.isEmpty()) {
        Firing firing = new Firing(guardrail, phase, kinds);
        firings.add(firing);
        if (firing.action() == Action.BLOCK) {
          return new Screening(List.copyOf(current), List.copyOf(firings), firing);
        }
      }
    }
    return new Screening(List.copyOf(current), List.copyOf(firings), null);
  }

  /** An organization's term or pattern is told as its kind, not as which one: "term", "pattern". */
  static String kindOf(String kind) {
    return WHICH_ONE.matcher(kind).replaceFirst("");
  }

  /** The index a term's or a pattern's kind ends with ({@code term_3}). */
  private static final java.util.regex.Pattern WHICH_ONE =
      java.util.regex.Pattern.compile("_\\d+$");
}
