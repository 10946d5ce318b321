package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.engram.support.Seeded;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The ranker over random candidates, hits and vectors: the order and the score's bounds. */
@ExtendWith(Seeded.class)
class ActivationRankerRandomizedTest {
  private static final Instant NOW = Instant.parse("2030-06-01T12:00:00Z");
  private static final int DIMENSIONS = 8;
  private static final String[] WORDS = {
    "acme", "invoice", "april", "contract", "renewal", "beta", "support"
  };

  private record Case(
      String query,
      List<MemoryRecord> candidates,
      List<MemorySearch.Hit> lexical,
      List<MemorySearch.Hit> vector,
      float[] queryVector) {}

  private static float[] unit(Random random) {
    float[] v = new float[DIMENSIONS];
    double norm = 0;
    for (int i = 0; i < DIMENSIONS; i++) {
      v[i] = (float) random.nextGaussian();
      norm += v[i] * v[i];
    }
    for (int i = 0; i < DIMENSIONS; i++) {
      v[i] /= (float) Math.sqrt(norm);
    }
    return v;
  }

  private static String phrase(Random random) {
    StringBuilder text = new StringBuilder();
    for (int i = 0, n = 1 + random.nextInt(5); i < n; i++) {
      text.append(i == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
    }
    return text.toString();
  }

  private static Case randomCase(Random random) {
    List<MemoryRecord> candidates = new ArrayList<>();
    List<MemorySearch.Hit> lexical = new ArrayList<>();
    for (int i = 0, n = 1 + random.nextInt(30); i < n; i++) {
      MemoryRecord.Draft draft = new MemoryRecord.Draft(
          "org_1",
          null,
          phrase(random),
          random.nextBoolean() ? null : WORDS[random.nextInt(WORDS.length)],
          MemoryKind.FACT,
          random.nextDouble(),
          null);
      Instant at = NOW.minusSeconds(random.nextInt(100_000_000));
      MemoryRecord memory = MemoryRecord.created(
          draft,
          MemoryState.DURABLE,
          MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
          at,
          at,
          unit(random));
      for (int uses = random.nextInt(20); uses > 0; uses--) {
        memory = new MemoryRecord(
            memory.id(),
            memory.orgId(),
            memory.agent(),
            memory.endUser(),
            memory.session(),
            memory.text(),
            memory.subject(),
            memory.kind(),
            memory.confidence(),
            memory.metadataJson(),
            memory.state(),
            memory.origin(),
            memory.occurredAt(),
            memory.createdAt(),
            memory.updatedAt(),
            memory.uses().plus(UseKind.RETRIEVAL, NOW.minusSeconds(random.nextInt(1_000_000))),
            memory.counts(),
            memory.embedding(),
            memory.validity());
      }
      candidates.add(memory);
      if (random.nextInt(3) > 0) {
        lexical.add(new MemorySearch.Hit(memory.id(), (float) (random.nextDouble() * 20)));
      }
    }
    lexical.sort(Comparator.comparingDouble(MemorySearch.Hit::score).reversed());
    List<MemorySearch.Hit> vector = new ArrayList<>();
    candidates.stream()
        .filter(m -> random.nextBoolean())
        .forEach(m -> vector.add(new MemorySearch.Hit(m.id(), 0.5f)));
    return new Case(phrase(random), candidates, lexical, vector, unit(random));
  }

  private static List<ActivationRanker.Ranked> rank(
      Case c, RetrievalRequest.RankingMode mode, boolean activation) {
    return new ActivationRanker(mode, activation)
        .rank(c.query(), c.candidates(), c.lexical(), c.vector(), c.queryVector(), NOW);
  }

  @Test
  void theOrderIsByScoreThenIdAndDoesNotDependOnTheCandidatesOrder(Random random) {
    for (int round = 0; round < 300; round++) {
      Case c = randomCase(random);
      for (RetrievalRequest.RankingMode mode : RetrievalRequest.RankingMode.values()) {
        List<ActivationRanker.Ranked> ranked = rank(c, mode, true);
        assertThat(ranked).hasSize(c.candidates().size());
        for (int i = 1; i < ranked.size(); i++) {
          ActivationRanker.Ranked before = ranked.get(i - 1);
          ActivationRanker.Ranked after = ranked.get(i);
          assertThat(before.score() > after.score()
                  || before.score() == after.score()
                      && before.memory().id().compareTo(after.memory().id()) < 0)
              .as("rank %d before rank %d", i - 1, i)
              .isTrue();
        }
        List<MemoryRecord> shuffled = new ArrayList<>(c.candidates());
        Collections.shuffle(shuffled, random);
        Case reordered = new Case(c.query(), shuffled, c.lexical(), c.vector(), c.queryVector());
        assertThat(
                rank(reordered, mode, true).stream().map(r -> r.memory().id()).toList())
            .isEqualTo(ranked.stream().map(r -> r.memory().id()).toList());
      }
    }
  }

  @Test
  void activationAndConfidenceScaleRelevanceWithinItsBounds(Random random) {
    double floor = 1 - ActivationRanker.ACTIVATION_WEIGHT - ActivationRanker.CONFIDENCE_WEIGHT;
    for (int round = 0; round < 300; round++) {
      Case c = randomCase(random);
      for (ActivationRanker.Ranked r : rank(c, RetrievalRequest.RankingMode.HYBRID, true)) {
        ActivationRanker.Explanation e = r.explanation();
        assertThat(e.score()).isLessThanOrEqualTo(e.relevance() + 1e-12);
        assertThat(e.score()).isGreaterThanOrEqualTo(e.relevance() * floor - 1e-12);
        assertThat(e.activation()).isBetween(0.0, 1.0);
        if (e.bm25() == null && e.similarity() <= 0) {
          assertThat(e.score())
              .as("an irrelevant memory cannot rise on activation")
              .isZero();
        }
      }
      for (ActivationRanker.Ranked r : rank(c, RetrievalRequest.RankingMode.HYBRID, false)) {
        assertThat(r.score()).isCloseTo(r.explanation().relevance(), within(0.0));
      }
    }
  }

  @Test
  void lexicalRelevanceIsTheBm25ScoreOverTheBest(Random random) {
    for (int round = 0; round < 300; round++) {
      Case c = randomCase(random);
      double best =
          c.lexical().stream().mapToDouble(MemorySearch.Hit::score).max().orElse(1);
      for (ActivationRanker.Ranked r : rank(c, RetrievalRequest.RankingMode.LEXICAL, false)) {
        double expected = r.explanation().bm25() == null ? 0 : r.explanation().bm25() / best;
        assertThat(r.explanation().relevance()).isCloseTo(expected, within(1e-9));
        assertThat(r.explanation().relevance()).isBetween(0.0, 1.0);
      }
    }
  }
}
