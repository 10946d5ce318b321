package io.engram.inference.usage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BilledTokensTest {

  @Test
  void reservesWhatTheModelChargesOnceItHasAnsweredAndForgetsAnOutlierSlowly() {
    BilledTokens billed = new BilledTokens();
    // Nothing learned yet: twice the gateway's own count.
    assertThat(billed.expected("org_a", "embedder", 3)).isEqualTo(6);
    billed.charged("org_a", "embedder", 1, 7);
    assertThat(billed.expected("org_a", "embedder", 1)).isEqualTo(7);
    assertThat(billed.expected("org_a", "embedder", 2)).isEqualTo(14);
    // Per organization and model: another's answers teach this one nothing.
    assertThat(billed.expected("org_b", "embedder", 2)).isEqualTo(4);
    assertThat(billed.expected("org_a", "other", 2)).isEqualTo(4);
    // Answers at the gateway's count bring the ratio down, a twentieth at a time.
    billed.charged("org_a", "embedder", 10, 10);
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(665);
    for (int i = 0; i < 60; i++) {
      billed.charged("org_a", "embedder", 10, 10);
    }
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(100);
    // A provider that gives no count (-1) teaches nothing; never less than one token.
    billed.charged("org_a", "embedder", 10, -1);
    assertThat(billed.expected("org_a", "embedder", 0)).isEqualTo(1);
  }

  @Test
  void aRatioLearnedFromUnevenCountsReservesExactlyWhatItWillBeCharged() {
    BilledTokens billed = new BilledTokens();
    // A model that charges half as much again, rounded up: 11 for 7.
    billed.charged("org_a", "chat", 7, 11);
    assertThat(billed.expected("org_a", "chat", 7)).isEqualTo(11);
    assertThat(BilledTokens.atRatio(10, 1.5)).isEqualTo(15);
    assertThat(BilledTokens.atRatio(7, 11 / 7.0)).isEqualTo(11);
  }

  @Test
  void anOutlierNobodyAnswersAfterFadesWithTimeBackToWhereNothingIsKnown() {
    AtomicLong now = new AtomicLong();
    BilledTokens billed = new BilledTokens(now::get);
    // One answer charged 41 times the gateway's count: a small budget cannot take the next
    // request at that reservation, so no answer would ever bring the ratio down.
    billed.charged("org_a", "embedder", 1, 41);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(410);
    now.addAndGet(BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(215);
    now.addAndGet(5 * BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(27);
    // The next answer starts from what time left, not from the outlier.
    billed.charged("org_a", "embedder", 10, 12);
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(248);
    // A ratio learned below where nothing is known drifts back up there: a quiet hour never
    // leaves a reservation below what a node that knows nothing would hold.
    billed.charged("org_b", "embedder", 10, 15);
    assertThat(billed.expected("org_b", "embedder", 100)).isEqualTo(150);
    now.addAndGet(20 * BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_b", "embedder", 100)).isEqualTo(200);
    // A model that charged less than the gateway counted is reserved at the gateway's count.
    billed.charged("org_c", "chat", 9, 2);
    assertThat(billed.expected("org_c", "chat", 5000)).isEqualTo(5000);
  }
}
