package io.engram.memory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Whether an answer drew on a memory that was put in its prompt. Being injected proves nothing (a
 * question about the showroom gets every memory that passed the cut); what the answer says does:
 * the memory used is the one whose words the answer repeats where the question did not bring them.
 * An answer's <em>new</em> terms are its content terms ({@link MemoryText}: stemmed, stop words
 * out) that are not the question's; a memory was used when it holds at least {@link #ENOUGH} of
 * them, or at least {@link #SHARE} of them (a short answer, "7 May 2023", repeats one or two).
 * Both constants were chosen on the development sets' reference answers (docs/benchmarks.md).
 */
public final class AnswerUse {
  /** New answer terms found in a memory that show it was used whatever the answer's length. */
  static final int ENOUGH = 3;
  /** Share of the answer's new terms found in a memory that shows it was used. */
  static final double SHARE = 0.7;

  /** One memory as it went into the prompt. */
  public record Injected(String id, String text) {}

  private AnswerUse() {}

  /** The injected memories the answer used, in the order given. */
  public static List<String> usedBy(String answer, String question, List<Injected> injected) {
    List<String> used = new ArrayList<>();
    if (answer == null || answer.isBlank() || injected.isEmpty()) {
      return used;
    }
    Set<String> fresh = fresh(answer, question);
    if (fresh.isEmpty()) {
      return used;
    }
    for (Injected memory : injected) {
      if (used(fresh, MemoryText.terms(memory.text()))) {
        used.add(memory.id());
      }
    }
    return used;
  }

  /** The answer's content terms that are not the question's. */
  static Set<String> fresh(String answer, String question) {
    Set<String> fresh = new HashSet<>(MemoryText.terms(answer));
    fresh.removeAll(MemoryText.terms(question == null ? "" : question));
    return fresh;
  }

  static boolean used(Set<String> answerTerms, Set<String> memoryTerms) {
    return used(answerTerms, memoryTerms, ENOUGH, SHARE);
  }

  /** The rule with other constants: how they were chosen (AnswerUseBench). */
  static boolean used(Set<String> answerTerms, Set<String> memoryTerms, int enough, double share) {
    int shared = 0;
    for (String term : answerTerms) {
      if (memoryTerms.contains(term)) {
        shared++;
      }
    }
    return shared > 0 && (shared >= enough || shared >= share * answerTerms.size());
  }
}
