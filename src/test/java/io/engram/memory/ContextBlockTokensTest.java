package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.TokenCounter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The memory block's token count is the sum of what its lines were counted when they were chosen
 * (cl100k_base splits a text into pieces that never span a line's end, so a block counts as its
 * lines do): the block is not counted a second time. Checked on random memories with every kind of
 * character a memory may hold at its edges: spaces, carriage returns, digits, punctuation, emoji,
 * letters of several scripts.
 */
class ContextBlockTokensTest {
  private static final String[] PIECES = {
    " ",
    "  ",
    "\r",
    "\r\n",
    "\n",
    "\t",
    "7",
    "2026",
    "3.5",
    ".",
    "!",
    "?!",
    "'s",
    "'ll",
    "--",
    "<",
    "</memory>",
    ">",
    "[",
    "]",
    "|",
    "Ada",
    "ada",
    "Zürich",
    "東京",
    "данные",
    "🙂",
    "e\u0301",
    "x",
    "é"
  };

  private static String text(Random random) {
    StringBuilder text = new StringBuilder();
    int pieces = 1 + random.nextInt(12);
    for (int i = 0; i < pieces; i++) {
      text.append(PIECES[random.nextInt(PIECES.length)]);
    }
    return text.toString();
  }

  @Test
  void aBlockCountsAsTheSumOfItsLines() {
    Random random = new Random(43);
    MemoryKind[] kinds = MemoryKind.values();
    for (int round = 0; round < 400; round++) {
      List<MemoryRecord> ranked = new ArrayList<>();
      int count = 1 + random.nextInt(8);
      for (int i = 0; i < count; i++) {
        ranked.add(new MemoryRecord(
            "mem_" + round + "_" + i,
            "org_1",
            null,
            null,
            null,
            text(random),
            random.nextBoolean() ? null : text(random),
            kinds[random.nextInt(kinds.length)],
            random.nextBoolean() ? 1.0 : random.nextDouble(),
            null,
            MemoryState.DURABLE,
            MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
            Instant.ofEpochSecond(random.nextInt(2_000_000_000)),
            Instant.EPOCH,
            Instant.EPOCH,
            UseHistory.first(UseKind.ENCODE, Instant.EPOCH),
            MemoryRecord.UseCounts.NONE,
            null,
            Validity.NONE));
      }
      for (ContextMode mode : ContextMode.values()) {
        int budget = 20 + random.nextInt(200);
        ContextBlock.Assembled block = ContextBlock.assemble(ranked, mode, budget);
        if (block.included() > 0) {
          assertThat(block.tokens())
              .as("%s", block.systemBlock())
              .isEqualTo(TokenCounter.count(block.systemBlock()))
              .isLessThanOrEqualTo(budget);
        }
      }
    }
  }
}
