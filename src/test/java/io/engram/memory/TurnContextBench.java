package io.engram.memory;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the vector would gain if a turn were embedded with the turn before it (the lever "what the
 * vector sees" of issue 42), measured on the vectors alone: for every question of a development
 * set, hit@5/10/20 of the nearest turns by the turn's own vector, by the vector of the previous
 * turn and this one together, by the larger of both similarities, and by their unit-length sum.
 * Vector-only figures: they say whether the context carries information the own vector lacks, not
 * what hybrid retrieval would gain.
 *
 * <p>Arguments: the sets (default locomo-dev friendsqa); run with bench/turn-context.sh.
 */
public final class TurnContextBench {
  private TurnContextBench() {}

  public static void main(String[] args) throws Exception {
    List<String> sets = args.length == 0 ? List.of("locomo-dev", "friendsqa") : List.of(args);
    Embedder embedder = Embedder.shared(Files.createTempDirectory("engram-onnx"));
    String[] ways = {
      "own", "with previous", "larger of both", "sum", "own + the previous turn's own (no new call)"
    };
    for (String set : sets) {
      if (!Files.exists(DevelopmentSets.file(set))) {
        System.out.println("Skipped " + set + ": no data set at " + DevelopmentSets.file(set));
        continue;
      }
      int[][] hits = new int[ways.length][3];
      int questions = 0;
      for (DevelopmentSets.Conversation conversation : DevelopmentSets.read(set)) {
        List<DevelopmentSets.Turn> turns = conversation.turns();
        List<String> own = new ArrayList<>();
        List<String> withPrevious = new ArrayList<>();
        for (int i = 0; i < turns.size(); i++) {
          // As the server embeds a memory: its subject (the speaker), then its text.
          own.add(indexed(turns.get(i)));
          withPrevious.add(
              i == 0 ? indexed(turns.get(i)) : indexed(turns.get(i - 1)) + "\n" + own.get(i));
        }
        List<float[]> ownVectors = embedder.embedAll(own);
        List<float[]> contextVectors = embedder.embedAll(withPrevious);
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < turns.size(); i++) {
          index.put(turns.get(i).id(), i);
        }
        for (DevelopmentSets.Question question : conversation.questions()) {
          float[] q = embedder.embedAll(List.of(question.text())).getFirst();
          int upTo = question.before() == null
              ? turns.size()
              : index.getOrDefault(question.before(), turns.size());
          questions++;
          for (int way = 0; way < ways.length; way++) {
            double[] score = new double[upTo];
            for (int i = 0; i < upTo; i++) {
              double a = Embedder.dot(q, ownVectors.get(i));
              double b = Embedder.dot(q, contextVectors.get(i));
              double previous = i == 0 ? a : Embedder.dot(q, ownVectors.get(i - 1));
              score[i] = switch (way) {
                case 0 -> a;
                case 1 -> b;
                case 2 -> Math.max(a, b);
                case 3 -> (a + b) / norm(ownVectors.get(i), contextVectors.get(i));
                default ->
                  i == 0 ? a : (a + previous) / norm(ownVectors.get(i), ownVectors.get(i - 1));
              };
            }
            int first = firstEvidence(score, turns, question);
            int[] ks = {5, 10, 20};
            for (int k = 0; k < ks.length; k++) {
              if (first < ks[k]) {
                hits[way][k]++;
              }
            }
          }
        }
      }
      System.out.printf(Locale.ROOT, "%n### %s, vectors only (%d questions)%n%n", set, questions);
      System.out.println("| the turn's vector | hit@5 | hit@10 | hit@20 |\n|---|---|---|---|");
      for (int way = 0; way < ways.length; way++) {
        System.out.printf(
            Locale.ROOT,
            "| %s | %.3f | %.3f | %.3f |%n",
            ways[way],
            hits[way][0] / (double) questions,
            hits[way][1] / (double) questions,
            hits[way][2] / (double) questions);
      }
    }
  }

  private static String indexed(DevelopmentSets.Turn turn) {
    return MemoryRecord.indexedText(turn.speaker().isBlank() ? null : turn.speaker(), turn.text());
  }

  private static double norm(float[] a, float[] b) {
    double sum = 0;
    for (int i = 0; i < a.length; i++) {
      double v = a[i] + b[i];
      sum += v * v;
    }
    return Math.sqrt(sum);
  }

  /** The rank (0 first) of the best-scored evidence turn, or Integer.MAX_VALUE. */
  private static int firstEvidence(
      double[] score, List<DevelopmentSets.Turn> turns, DevelopmentSets.Question question) {
    int best = Integer.MAX_VALUE;
    for (int i = 0; i < score.length; i++) {
      if (!question.evidence().contains(turns.get(i).id())) {
        continue;
      }
      int above = 0;
      for (double other : score) {
        if (other > score[i]) {
          above++;
        }
      }
      best = Math.min(best, above);
    }
    return best;
  }
}
