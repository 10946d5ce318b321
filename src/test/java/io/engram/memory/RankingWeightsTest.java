package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The ranking's constants: the server ranks with the shipped ones; a benchmark names others. */
class RankingWeightsTest {
  @Test
  void theServerRanksWithTheShippedWeightsAndABenchmarkMayChangeOneByName() throws IOException {
    assertThat(RankingWeights.CURRENT).isEqualTo(RankingWeights.SHIPPED);
    assertThat(ActivationRanker.SUBJECT_BOOST).isEqualTo(RankingWeights.SHIPPED.subject());
    assertThat(ContextSpread.ANSWER).isEqualTo(RankingWeights.SHIPPED.answerLend());
    assertThat(MemoryDocument.SIMILARITY.getK1()).isEqualTo(0.9f);
    assertThat(MemoryDocument.SIMILARITY.getB()).isEqualTo(0.4f);
    // The Solr index scores BM25 as the embedded one does: its schema repeats the two constants.
    assertThat(solrSchema())
        .contains("<float name=\"k1\">" + (float) RankingWeights.SHIPPED.bm25K1() + "</float>")
        .contains("<float name=\"b\">" + (float) RankingWeights.SHIPPED.bm25B() + "</float>");
    RankingWeights tried = RankingWeights.parse("answerType=0, spreadShare=0.7, bm25B=0.2");
    assertThat(tried.answerType()).isZero();
    assertThat(tried.bm25B()).isEqualTo(0.2);
    assertThat(tried.spreadShare()).isEqualTo(0.7);
    assertThat(tried.subject()).isEqualTo(RankingWeights.SHIPPED.subject());
    assertThatThrownBy(() -> RankingWeights.parse("subjectBoost=0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("subjectBoost=0");
  }

  private static String solrSchema() throws IOException {
    try (InputStream schema = RankingWeights.class.getResourceAsStream("/solr/memory/schema.xml")) {
      assertThat(schema).as("the Solr index's schema on the class path").isNotNull();
      return new String(schema.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
