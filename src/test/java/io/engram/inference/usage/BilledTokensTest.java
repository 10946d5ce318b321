package io.engram.inference.usage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BilledTokensTest {

  @Test
  void reservesWhatTheProviderBillsOnceItHasAnsweredAndForgetsAnOutlierSlowly() {
    BilledTokens billed = new BilledTokens();
    // Nothing learned yet: the gateway's own count.
    assertThat(billed.expected("org_a", "embedder", 3)).isEqualTo(3);
    billed.billed("org_a", "embedder", 1, 7);
    assertThat(billed.expected("org_a", "embedder", 1)).isEqualTo(7);
    assertThat(billed.expected("org_a", "embedder", 2)).isEqualTo(14);
    // Per organization and model: another's answers teach this one nothing.
    assertThat(billed.expected("org_b", "embedder", 2)).isEqualTo(2);
    assertThat(billed.expected("org_a", "other", 2)).isEqualTo(2);
    // Answers at the gateway's count bring the ratio down, a twentieth at a time.
    billed.billed("org_a", "embedder", 10, 10);
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(665);
    for (int i = 0; i < 60; i++) {
      billed.billed("org_a", "embedder", 10, 10);
    }
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(100);
    // A provider that gives no count (-1) teaches nothing; never less than one token.
    billed.billed("org_a", "embedder", 10, -1);
    assertThat(billed.expected("org_a", "embedder", 0)).isEqualTo(1);
  }

  @Test
  void anOutlierNobodyAnswersAfterFadesWithTime() {
    AtomicLong now = new AtomicLong();
    BilledTokens billed = new BilledTokens(now::get);
    // One answer billed 41 times the gateway's count: a small budget cannot take the next request
    // at that reservation, so no answer would ever bring the ratio down.
    billed.billed("org_a", "embedder", 1, 41);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(410);
    now.addAndGet(BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(210);
    now.addAndGet(5 * BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_a", "embedder", 10)).isEqualTo(17);
    // The next answer starts from what time left, not from the outlier.
    billed.billed("org_a", "embedder", 10, 12);
    assertThat(billed.expected("org_a", "embedder", 100)).isEqualTo(155);
    // A provider that bills less than the gateway counts comes back up to the gateway's count.
    billed.billed("org_b", "embedder", 10, 5);
    now.addAndGet(20 * BilledTokens.HALF_LIFE_NANOS);
    assertThat(billed.expected("org_b", "embedder", 100)).isEqualTo(100);
  }
}
