package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * How {@link AnswerUse} tells a memory the answer drew on, chosen on the development sets'
 * reference answers with one set left out. Reads a dump of bench/memory-sets.sh (DUMP=FILE): for
 * each question, the first ten memories retrieved and their text; a memory holding an evidence
 * turn is one a correct answer drew on, any other one it did not. For each rule (ENOUGH new answer
 * terms, or SHARE of them), precision and recall of "used" per set; the rule is chosen by mean F1
 * on every set but one.
 *
 * <p>bash bench/answer-use.sh FILE
 */
public final class AnswerUseBench {
  private static final int[] ENOUGH = {1, 2, 3, 4, 5, 8};
  private static final double[] SHARE = {0.2, 0.3, 0.5, 0.7, 1.0, 2.0};

  /** Per set and rule: true and false positives, false negatives. */
  private static final Map<String, Map<String, int[]>> COUNTS = new LinkedHashMap<>();

  private AnswerUseBench() {}

  public static void main(String[] args) throws Exception {
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      JsonNode question = Json.MAPPER.readTree(line);
      if (question.get("foreign").asBoolean() || question.get("answer").asText().isBlank()) {
        continue;
      }
      Set<String> evidence = new HashSet<>();
      question.get("evidence").forEach(e -> evidence.add(e.asText()));
      Set<String> fresh =
          AnswerUse.fresh(question.get("answer").asText(), question.get("query").asText());
      Map<String, int[]> rules =
          COUNTS.computeIfAbsent(setOf(question), s -> new LinkedHashMap<>());
      for (JsonNode memory : question.get("top")) {
        if (!memory.has("text")) {
          continue;
        }
        boolean truth = evidence.contains(memory.get("turn").asText());
        Set<String> terms = MemoryText.terms(memory.get("text").asText());
        for (int enough : ENOUGH) {
          for (double share : SHARE) {
            boolean said = !fresh.isEmpty() && AnswerUse.used(fresh, terms, enough, share);
            int[] c = rules.computeIfAbsent(rule(enough, share), r -> new int[3]);
            c[0] += said && truth ? 1 : 0;
            c[1] += said && !truth ? 1 : 0;
            c[2] += !said && truth ? 1 : 0;
          }
        }
      }
    }
    List<String> sets = new ArrayList<>(COUNTS.keySet());
    System.out.println("| set | rule (enough, share) | precision | recall | F1 |");
    System.out.println("|---|---|---|---|---|");
    for (String out : sets) {
      String chosen = best(sets.stream().filter(s -> !s.equals(out)).toList());
      System.out.println(row(out, chosen + " chosen without " + out));
    }
    String chosen = best(sets);
    for (String set : sets) {
      System.out.println(row(set, chosen + " chosen on all"));
      System.out.println(row(set, rule(AnswerUse.ENOUGH, AnswerUse.SHARE) + " shipped"));
    }
  }

  /** The line's set; dumps written before lines named it are told by their conversation ids. */
  private static String setOf(JsonNode question) {
    if (question.hasNonNull("set") && !question.get("set").asText().isEmpty()) {
      return question.get("set").asText();
    }
    String conversation = question.get("conversation").asText();
    return conversation.startsWith("conv-")
        ? "locomo-dev"
        : conversation.startsWith("friends") ? "friendsqa" : "realmem";
  }

  private static String rule(int enough, double share) {
    return String.format(Locale.ROOT, "(%d, %.1f)", enough, share);
  }

  private static String best(List<String> sets) {
    String best = null;
    double bestF1 = -1;
    for (String rule : COUNTS.get(sets.getFirst()).keySet()) {
      double f1 =
          sets.stream().mapToDouble(s -> f1(COUNTS.get(s).get(rule))).average().orElse(0);
      if (f1 > bestF1) {
        bestF1 = f1;
        best = rule;
      }
    }
    return best;
  }

  private static double f1(int[] c) {
    return c[0] == 0 ? 0 : 2.0 * c[0] / (2.0 * c[0] + c[1] + c[2]);
  }

  private static String row(String set, String label) {
    String rule = label.substring(0, label.indexOf(')') + 1);
    int[] c = COUNTS.get(set).get(rule);
    return String.format(
        Locale.ROOT,
        "| %s | %s | %.3f | %.3f | %.3f |",
        set,
        label,
        c[0] / Math.max(1.0, c[0] + c[1]),
        c[0] / Math.max(1.0, c[0] + c[2]),
        f1(c));
  }
}
