package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.instances.storage.ConversationHistory;
import org.junit.jupiter.api.Test;

/** An answer with NUL characters (an untrained local model writes some) can be kept on PostgreSQL. */
class ConversationAnswerTest {

  @Test
  void nulCharactersOfAnAnswerAreKeptAsReplacementCharacters() {
    ConversationHistory.Answered answered = new ConversationHistory.Answered(
        "key_1",
        null,
        "req_1",
        "m",
        "[{\"role\":\"user\",\"content\":\"hi\\u0000\"}]",
        "a\0b\0",
        1,
        2,
        0);
    assertThat(answered.answer()).isEqualTo("a\uFFFDb\uFFFD");
    assertThat(answered.messages()).contains("\\u0000");
  }
}
