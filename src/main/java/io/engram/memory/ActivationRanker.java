package io.engram.memory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Orders retrieval candidates. Relevance first: in hybrid mode a weighted sum of the BM25 score
 * (divided by the best BM25 score among the candidates) and the cosine similarity of the
 * embeddings, computed exactly for every candidate, whichever search found it; raised by
 * {@link #SUBJECT_BOOST} when the query names the memory's subject as a whole word ("What does
 * Acme's contract say" prefers memories about Acme over memories that merely mention it), and by
 * {@link #TIME_BOOST} when the query names a time the memory occurred in ({@link QueryTime}: "what
 * did Maria start on 3 June, 2023"), and by {@link #ANSWER_TYPE_BOOST} when the memory holds the
 * kind of answer the question asks for ({@link AnswerType}: "how often" and "three times a week").
 * Then activation and confidence scale it:
 *
 * <pre>score = relevance * (1 - A - C + A * activation + C * confidence)</pre>
 *
 * with activation the normalized ACT-R base level ({@link Activation}). Scaling rather than adding
 * means an irrelevant memory cannot rise on activation alone, while of two equally relevant
 * memories the more used, more recent and more certain one comes first. In hybrid mode a memory
 * may then rise by the context of a hit next to it in time ({@link ContextSpread}).
 */
public final class ActivationRanker {
  /** Share of BM25 in hybrid relevance; the rest is vector similarity. Tuned on LoCoMo (docs/benchmarks.md). */
  static final double LEXICAL_WEIGHT = RankingWeights.CURRENT.lexical();
  /**
   * Relevance is raised by this share when the query names the memory's subject. Tuned on LoCoMo
   * with leave-one-conversation-out figures (docs/benchmarks.md): 0.3 before time-aware retrieval,
   * 0.15 since; more made a question about a person prefer anything that person said.
   */
  static final double SUBJECT_BOOST = RankingWeights.CURRENT.subject();
  /** Relevance is raised by this share when the memory occurred in the time the query names. */
  static final double TIME_BOOST = RankingWeights.CURRENT.time();
  /**
   * Relevance is raised by this share when the memory holds the kind of answer the question asks
   * for ({@link AnswerType}). Tuned on LoCoMo with leave-one-conversation-out figures.
   */
  static final double ANSWER_TYPE_BOOST = RankingWeights.CURRENT.answerType();

  static final double ACTIVATION_WEIGHT = RankingWeights.CURRENT.activation();
  static final double CONFIDENCE_WEIGHT = RankingWeights.CURRENT.confidence();

  /** Why a memory got its score: every input of the formula. */
  public record Explanation(
      Integer lexicalRank,
      Double bm25,
      Integer vectorRank,
      Double similarity,
      boolean subjectMatch,
      boolean timeMatch,
      boolean answerMatch,
      double relevance,
      double baseLevel,
      double activation,
      double confidence,
      double score,
      String contextOf) {

    /**
     * The same explanation, its score raised to {@code lent} by the hit it neighbours in time
     * ({@link ContextSpread}): the final score, and where it came from.
     */
    Explanation lentBy(String hitId, double lent) {
      return new Explanation(
          lexicalRank,
          bm25,
          vectorRank,
          similarity,
          subjectMatch,
          timeMatch,
          answerMatch,
          relevance,
          baseLevel,
          activation,
          confidence,
          lent,
          hitId);
    }
  }

  public record Ranked(MemoryRecord memory, Explanation explanation) {
    public double score() {
      return explanation.score();
    }
  }

  /** Best first; equal scores by id, so a ranking never depends on the order candidates came in. */
  static final Comparator<Ranked> ORDER = Comparator.comparingDouble(Ranked::score)
      .reversed()
      .thenComparing(r -> r.memory().id());

  private static final Pattern NON_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");

  private final RetrievalRequest.RankingMode mode;
  private final boolean useActivation;
  private final QueryTime.Range time;

  public ActivationRanker(RetrievalRequest.RankingMode mode, boolean useActivation) {
    this(mode, useActivation, null);
  }

  /** @param time the time the query names (null: none), preferred in hybrid mode */
  ActivationRanker(RetrievalRequest.RankingMode mode, boolean useActivation, QueryTime.Range time) {
    this.mode = mode;
    this.useActivation = useActivation;
    this.time = time;
  }

  public List<Ranked> rank(
      String query,
      List<MemoryRecord> candidates,
      List<MemorySearch.Hit> lexical,
      List<MemorySearch.Hit> vectorHits,
      float[] queryVector,
      Instant now) {
    String queryWords = words(query);
    AnswerType asked =
        mode == RetrievalRequest.RankingMode.HYBRID ? AnswerType.askedBy(query).orElse(null) : null;
    Map<String, Integer> lexicalRanks = ranks(lexical);
    Map<String, Integer> vectorRanks = ranks(vectorHits);
    Map<String, Float> bm25 = new HashMap<>();
    lexical.forEach(hit -> bm25.put(hit.memoryId(), hit.score()));
    double bestBm25 =
        lexical.stream().mapToDouble(MemorySearch.Hit::score).max().orElse(1);
    List<Ranked> ranked = new ArrayList<>(candidates.size());
    for (MemoryRecord memory : candidates) {
      Float lexicalScore = bm25.get(memory.id());
      double lexicalPart = lexicalScore == null ? 0 : lexicalScore / bestBm25;
      Double similarity =
          queryVector == null ? null : Embedder.dot(queryVector, memory.embedding());
      double match = switch (mode) {
        case LEXICAL -> lexicalPart;
        case VECTOR -> Math.max(0, similarity);
        case HYBRID ->
          LEXICAL_WEIGHT * lexicalPart + (1 - LEXICAL_WEIGHT) * Math.max(0, similarity);
      };
      boolean subjectMatch = mode == RetrievalRequest.RankingMode.HYBRID
          && memory.subject() != null
          && queryWords.contains(words(memory.subject()));
      boolean timeMatch = mode == RetrievalRequest.RankingMode.HYBRID
          && time != null
          && time.contains(memory.occurredAt());
      boolean answerMatch = asked != null && asked.answeredIn(memory.text());
      double relevance = match
          * (subjectMatch ? 1 + SUBJECT_BOOST : 1)
          * (timeMatch ? 1 + TIME_BOOST : 1)
          * (answerMatch ? 1 + ANSWER_TYPE_BOOST : 1);
      double baseLevel = Activation.baseLevel(memory.uses(), now);
      double activation = Activation.normalized(baseLevel);
      double score = useActivation
          ? relevance
              * (1
                  - ACTIVATION_WEIGHT
                  - CONFIDENCE_WEIGHT
                  + ACTIVATION_WEIGHT * activation
                  + CONFIDENCE_WEIGHT * memory.confidence())
          : relevance;
      ranked.add(new Ranked(
          memory,
          new Explanation(
              lexicalRanks.get(memory.id()),
              lexicalScore == null ? null : (double) lexicalScore,
              vectorRanks.get(memory.id()),
              similarity,
              subjectMatch,
              timeMatch,
              answerMatch,
              relevance,
              baseLevel,
              activation,
              memory.confidence(),
              score,
              null)));
    }
    ranked.sort(ORDER);
    return ranked;
  }

  /**
   * More candidates ranked into a ranking: a candidate's score does not depend on the others, so
   * ranking only the new ones and merging gives what ranking them all again would.
   */
  List<Ranked> rankInto(
      List<Ranked> ranked,
      String query,
      List<MemoryRecord> more,
      List<MemorySearch.Hit> lexical,
      List<MemorySearch.Hit> vectorHits,
      float[] queryVector,
      Instant now) {
    List<Ranked> all = new ArrayList<>(ranked.size() + more.size());
    all.addAll(ranked);
    all.addAll(rank(query, more, lexical, vectorHits, queryVector, now));
    all.sort(ORDER);
    return all;
  }

  /** Lowercase words separated and surrounded by single spaces, so a contains() test matches whole words. */
  public static String words(String text) {
    return " " + String.join(" ", NON_WORD.split(text.toLowerCase(Locale.ROOT).strip())) + " ";
  }

  private static Map<String, Integer> ranks(List<MemorySearch.Hit> hits) {
    Map<String, Integer> ranks = new HashMap<>();
    for (int i = 0; i < hits.size(); i++) {
      ranks.putIfAbsent(hits.get(i).memoryId(), i + 1);
    }
    return ranks;
  }
}
