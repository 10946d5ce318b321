package io.engram.inference.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.engram.inference.engine.Sampling;
import io.engram.support.Seeded;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The local sampler over random distributions: greedy, seeded, nucleus and penalties keep their word. */
@ExtendWith(Seeded.class)
class SamplerRandomizedTest {

  private static float[] distribution(Random random, int size) {
    float[] p = new float[size];
    double sum = 0;
    for (int i = 0; i < size; i++) {
      p[i] = (float) Math.pow(random.nextDouble(), 3);
      sum += p[i];
    }
    for (int i = 0; i < size; i++) {
      p[i] /= (float) sum;
    }
    return p;
  }

  private static Sampling sampling(
      double temperature, double topP, double frequency, double presence, Long seed) {
    return new Sampling(null, temperature, topP, frequency, presence, List.of(), seed);
  }

  @Test
  void temperatureZeroIsTheMostLikelyToken(Random random) {
    for (int round = 0; round < 500; round++) {
      float[] p = distribution(random, 2 + random.nextInt(50));
      int best = 0;
      for (int i = 1; i < p.length; i++) {
        best = p[i] > p[best] ? i : best;
      }
      assertThat(new Sampler(sampling(0, random.nextDouble(), 0, 0, null), p.length).next(p))
          .isEqualTo(best);
    }
  }

  @Test
  void aSeedRepeatsTheWholeSequence(Random random) {
    for (int round = 0; round < 100; round++) {
      float[] p = distribution(random, 2 + random.nextInt(50));
      Sampling s = sampling(
          0.1 + random.nextDouble() * 1.9,
          0.1 + random.nextDouble() * 0.9,
          random.nextDouble() * 2 - 1,
          random.nextDouble() * 2 - 1,
          random.nextLong());
      Sampler first = new Sampler(s, p.length);
      Sampler second = new Sampler(s, p.length);
      for (int token = 0; token < 50; token++) {
        assertThat(second.next(p)).isEqualTo(first.next(p));
      }
    }
  }

  @Test
  void topPDrawsOnlyFromTheNucleus(Random random) {
    for (int round = 0; round < 300; round++) {
      float[] p = distribution(random, 2 + random.nextInt(30));
      double temperature = 0.2 + random.nextDouble() * 1.8;
      double topP = 0.05 + random.nextDouble() * 0.9;
      // The nucleus by the documented rule: tokens by weight p^(1/T), most likely first, until
      // top_p of the mass.
      double[] weight = new double[p.length];
      double total = 0;
      for (int i = 0; i < p.length; i++) {
        weight[i] = Math.pow(Math.max(p[i], 1e-30), 1 / temperature);
        total += weight[i];
      }
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < p.length; i++) {
        order.add(i);
      }
      order.sort(Comparator.comparingDouble((Integer i) -> weight[i]).reversed());
      Set<Integer> nucleus = new HashSet<>();
      double kept = 0;
      for (int i = 0; i < order.size() && (i == 0 || kept / total < topP - 1e-9); i++) {
        nucleus.add(order.get(i));
        kept += weight[order.get(i)];
      }
      // A tie at the nucleus' edge may be broken either way: the edge's equals are allowed too.
      double edge = nucleus.stream().mapToDouble(i -> weight[i]).min().orElseThrow();
      for (int i = 0; i < p.length; i++) {
        if (Math.abs(weight[i] - edge) <= 1e-12 * edge) {
          nucleus.add(i);
        }
      }
      Sampler sampler = new Sampler(sampling(temperature, topP, 0, 0, random.nextLong()), p.length);
      for (int draw = 0; draw < 50; draw++) {
        assertThat(nucleus).contains(sampler.next(p));
      }
    }
  }

  @Test
  void withoutTruncationTheDrawsFollowTheDistribution(Random random) {
    float[] p = distribution(random, 2 + random.nextInt(6));
    int draws = 40_000;
    int[] counts = new int[p.length];
    for (int draw = 0; draw < draws; draw++) {
      // A fresh sampler per draw: no penalties carry over from earlier tokens.
      counts[new Sampler(sampling(1, 1, 0, 0, random.nextLong()), p.length).next(p)]++;
    }
    for (int i = 0; i < p.length; i++) {
      // Four standard deviations of a binomial share at this many draws is under 0.01.
      assertThat(counts[i] / (double) draws)
          .as("token %d of %s", i, Arrays.toString(p))
          .isCloseTo(p[i], within(0.01));
    }
  }

  @Test
  void aLargePresencePenaltyMakesGreedyUseEveryTokenOnceBeforeRepeating(Random random) {
    for (int round = 0; round < 200; round++) {
      float[] p = distribution(random, 2 + random.nextInt(20));
      Sampler sampler = new Sampler(sampling(0, 1, 0, 1_000, null), p.length);
      Set<Integer> seen = new HashSet<>();
      for (int token = 0; token < p.length; token++) {
        assertThat(seen.add(sampler.next(p))).isTrue();
      }
    }
  }
}
