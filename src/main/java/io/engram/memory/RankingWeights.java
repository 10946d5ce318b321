package io.engram.memory;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The retrieval ranking's constants in one place ({@link ActivationRanker}, {@link ContextSpread},
 * {@link MemorySearch}, and BM25's k1 and b in {@link MemoryDocument#SIMILARITY}: the embedded
 * index's, which the Solr schema repeats), so each can be measured on every development set with
 * one data set left out (bench/memory-sets.sh, docs/benchmarks.md). The server always ranks with
 * {@link #SHIPPED}; only a benchmark's JVM sets {@code -Dengram.ranking=name=value,...} to try
 * another value (on the embedded index: the Solr schema's BM25 stays as it is written).
 */
record RankingWeights(
    double lexical,
    double subject,
    double time,
    double answerType,
    double activation,
    double confidence,
    double spreadShare,
    double spreadStep,
    double answerLend,
    double nameWeight,
    double bm25K1,
    double bm25B) {

  static final RankingWeights SHIPPED =
      new RankingWeights(0.4, 0.15, 0.3, 0.3, 0.2, 0.1, 0.85, 0.8, 0.9, 0.05, 0.9, 0.4);

  /** The weights in force: {@link #SHIPPED}, changed by -Dengram.ranking (benchmarks only). */
  static final RankingWeights CURRENT = parse(System.getProperty("engram.ranking", ""));

  /** {@code name=value,...} over {@link #SHIPPED}; an unknown name stops the JVM's start. */
  static RankingWeights parse(String spec) {
    Map<String, Double> values = new LinkedHashMap<>();
    values.put("lexical", SHIPPED.lexical);
    values.put("subject", SHIPPED.subject);
    values.put("time", SHIPPED.time);
    values.put("answerType", SHIPPED.answerType);
    values.put("activation", SHIPPED.activation);
    values.put("confidence", SHIPPED.confidence);
    values.put("spreadShare", SHIPPED.spreadShare);
    values.put("spreadStep", SHIPPED.spreadStep);
    values.put("answerLend", SHIPPED.answerLend);
    values.put("nameWeight", SHIPPED.nameWeight);
    values.put("bm25K1", SHIPPED.bm25K1);
    values.put("bm25B", SHIPPED.bm25B);
    for (String pair : spec.split(",")) {
      if (pair.isBlank()) {
        continue;
      }
      String[] nameValue = pair.split("=", 2);
      String name = nameValue[0].strip();
      if (!values.containsKey(name) || nameValue.length != 2) {
        throw new IllegalArgumentException(
            "engram.ranking: '" + pair + "' is not one of " + values.keySet() + " = a number");
      }
      values.put(name, Double.parseDouble(nameValue[1].strip()));
    }
    return new RankingWeights(
        values.get("lexical"),
        values.get("subject"),
        values.get("time"),
        values.get("answerType"),
        values.get("activation"),
        values.get("confidence"),
        values.get("spreadShare"),
        values.get("spreadStep"),
        values.get("answerLend"),
        values.get("nameWeight"),
        values.get("bm25K1"),
        values.get("bm25B"));
  }
}
