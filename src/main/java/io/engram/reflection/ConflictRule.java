package io.engram.reflection;

import io.engram.memory.MemoryKind;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryText;
import java.util.HashSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * When two memories on one subject contradict each other. Deterministic and explainable, and
 * deliberately narrow, because a flag asks a person to look:
 * <ul>
 *   <li><b>negation</b>: they say nearly the same thing (at least {@value #NEGATION_OVERLAP} of
 *   their content terms shared) and exactly one of them is negated ("prefers email" / "does not
 *   prefer email");</li>
 *   <li><b>different value</b>: both are facts, preferences, instructions or procedures, agree in
 *   polarity, share at least two content terms and differ in exactly one term each ("plan is Pro"
 *   / "plan is Enterprise").</li>
 * </ul>
 * Events and observations are never in a value conflict: things happen more than once.
 */
final class ConflictRule {
  static final double NEGATION_OVERLAP = 0.75;
  private static final Set<String> NEGATIONS = Set.of(
      "not",
      "no",
      "never",
      "none",
      "nobody",
      "nothing",
      "neither",
      "nor",
      "cannot",
      "without",
      "dont",
      "doesnt",
      "didnt",
      "isnt",
      "wasnt",
      "arent",
      "werent",
      "wont",
      "cant",
      "couldnt",
      "shouldnt",
      "wouldnt",
      "hasnt",
      "havent",
      "hadnt");
  private static final Set<MemoryKind> STATEMENT_KINDS =
      Set.of(MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.INSTRUCTION, MemoryKind.PROCEDURE);

  /** What the rule needs of one memory, computed once per run. */
  record Reading(Set<String> terms, boolean negated) {
    static Reading of(String text) {
      String normalized = text.toLowerCase(Locale.ROOT).replace('\u2019', '\'');
      int negations = 0;
      for (String word : normalized.split("[^\\p{L}\\p{N}']+")) {
        if (NEGATIONS.contains(word.replace("'", "")) || word.endsWith("n't")) {
          negations++;
        }
      }
      Set<String> terms = new HashSet<>();
      for (String term : MemoryText.terms(normalized)) {
        if (!term.contains("'") && !NEGATIONS.contains(term)) {
          terms.add(term);
        }
      }
      return new Reading(terms, negations % 2 == 1);
    }
  }

  private ConflictRule() {}

  /**
   * A cheap necessary condition for {@link #check}, by counting shared terms only: reflection asks
   * it of every similar pair on a subject, which can be millions.
   */
  static boolean mayConflict(Reading ra, Reading rb) {
    Set<String> small = ra.terms().size() <= rb.terms().size() ? ra.terms() : rb.terms();
    Set<String> large = small == ra.terms() ? rb.terms() : ra.terms();
    int shared = 0;
    for (String term : small) {
      if (large.contains(term)) {
        shared++;
      }
    }
    if (ra.negated() != rb.negated()) {
      int union = ra.terms().size() + rb.terms().size() - shared;
      return shared >= 2 && shared >= NEGATION_OVERLAP * union;
    }
    return shared >= 2
        && ra.terms().size() == rb.terms().size()
        && shared == ra.terms().size() - 1;
  }

  /** Why {@code a} and {@code b} contradict each other, or empty when the rule sees no contradiction. */
  static Optional<String> check(MemoryRecord a, Reading ra, MemoryRecord b, Reading rb) {
    if (!mayConflict(ra, rb)) {
      return Optional.empty();
    }
    Set<String> shared = new TreeSet<>(ra.terms());
    shared.retainAll(rb.terms());
    Set<String> onlyA = new TreeSet<>(ra.terms());
    onlyA.removeAll(rb.terms());
    Set<String> onlyB = new TreeSet<>(rb.terms());
    onlyB.removeAll(ra.terms());
    int union = shared.size() + onlyA.size() + onlyB.size();
    if (ra.negated() != rb.negated()) {
      if (shared.size() >= 2 && shared.size() >= NEGATION_OVERLAP * union) {
        return Optional.of("negation: both say " + shared + " and only "
            + (ra.negated() ? a.id() : b.id()) + " negates it");
      }
      return Optional.empty();
    }
    if (STATEMENT_KINDS.contains(a.kind())
        && STATEMENT_KINDS.contains(b.kind())
        && shared.size() >= 2
        && onlyA.size() == 1
        && onlyB.size() == 1) {
      return Optional.of("different value: both say " + shared + ", one with '"
          + onlyA.iterator().next() + "' and the other with '"
          + onlyB.iterator().next() + "'");
    }
    return Optional.empty();
  }
}
