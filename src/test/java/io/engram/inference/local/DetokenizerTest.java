package io.engram.inference.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class DetokenizerTest {

  @Test
  void aCharacterSplitOverByteTokensIsReleasedOnlyWhenWhole() {
    byte[] euro = "a€".getBytes(StandardCharsets.UTF_8); // 'a' then three bytes
    assertThat(Detokenizer.completePrefix(Arrays.copyOf(euro, 1))).isEqualTo(1);
    assertThat(Detokenizer.completePrefix(Arrays.copyOf(euro, 2))).isEqualTo(1);
    assertThat(Detokenizer.completePrefix(Arrays.copyOf(euro, 3))).isEqualTo(1);
    assertThat(Detokenizer.completePrefix(euro)).isEqualTo(4);
    byte[] emoji = "😀".getBytes(StandardCharsets.UTF_8);
    assertThat(Detokenizer.completePrefix(Arrays.copyOf(emoji, 3))).isZero();
    assertThat(Detokenizer.completePrefix(emoji)).isEqualTo(4);
    assertThat(Detokenizer.completePrefix(new byte[] {(byte) 0x80, 'x'}))
        .isEqualTo(2); // a stray byte is whole
  }
}
