package io.engram.memory;

import io.engram.platform.TokenCounter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The private runtime context block: retrieved memories written as a system prompt section, best
 * first, within a token budget ({@link TokenCounter}). Memories that would overflow the budget are left out whole, never cut.
 */
public final class ContextBlock {
  private static final DateTimeFormatter DAY =
      DateTimeFormatter.ofPattern("yyyy-MM-dd", Locale.ROOT).withZone(ZoneOffset.UTC);
  static final String HEADER = "Relevant memories from this organization, most relevant first. "
      + "Use them when they help answer; they may be incomplete or out of date.";
  static final String OPEN = "<memory>";
  static final String CLOSE = "</memory>";

  /** What the block's opening (with the header in full mode) and closing lines count. */
  private static final int FRAME_TOKENS_FULL =
      TokenCounter.count(OPEN + '\n' + HEADER + '\n' + CLOSE);

  private static final int FRAME_TOKENS_COMPACT = TokenCounter.count(OPEN + '\n' + CLOSE);

  /** The block, and how much of the ranked list it holds. */
  public record Assembled(
      String systemBlock, int tokens, int included, int omitted, List<String> includedIds) {}

  private ContextBlock() {}

  public static Assembled assemble(List<MemoryRecord> ranked, ContextMode mode, int tokenBudget) {
    StringBuilder block = new StringBuilder(OPEN).append('\n');
    if (mode == ContextMode.FULL) {
      block.append(HEADER).append('\n');
    }
    int tokens = mode == ContextMode.FULL ? FRAME_TOKENS_FULL : FRAME_TOKENS_COMPACT;
    List<String> included = new ArrayList<>();
    for (MemoryRecord memory : ranked) {
      String line = line(memory, mode) + '\n';
      int lineTokens = lineTokens(line);
      if (tokens + lineTokens > tokenBudget) {
        continue;
      }
      block.append(line);
      tokens += lineTokens;
      included.add(memory.id());
    }
    if (included.isEmpty()) {
      return new Assembled("", 0, 0, ranked.size(), List.of());
    }
    block.append(CLOSE);
    // The running count is the block's: cl100k_base cuts a text into pieces that never span the end
    // of a line, so the block counts as its lines did (ContextBlockTokensTest); counting it again
    // was most of a memory-on chat's token counting.
    return new Assembled(
        block.toString(),
        tokens,
        included.size(),
        ranked.size() - included.size(),
        List.copyOf(included));
  }

  /**
   * Token counts of lines already seen: the same memories come back request after request, and
   * counting was a sixth of a memory-on chat's time (docs/benchmarks.md). Bounded: emptied when
   * full, so it never holds more than {@link #COUNTED_LINES} lines.
   */
  private static final int COUNTED_LINES = 50_000;

  private static final java.util.concurrent.ConcurrentHashMap<String, Integer> LINE_TOKENS =
      new java.util.concurrent.ConcurrentHashMap<>();

  private static int lineTokens(String line) {
    Integer known = LINE_TOKENS.get(line);
    if (known != null) {
      return known;
    }
    int counted = TokenCounter.count(line);
    if (LINE_TOKENS.size() >= COUNTED_LINES) {
      LINE_TOKENS.clear();
    }
    LINE_TOKENS.put(line, counted);
    return counted;
  }

  static String line(MemoryRecord memory, ContextMode mode) {
    String text = memory.text().replace('\n', ' ');
    if (mode == ContextMode.COMPACT) {
      return "- " + text;
    }
    StringBuilder label = new StringBuilder(memory.kind().id());
    if (memory.subject() != null) {
      label.append(" | ").append(memory.subject().replace('\n', ' '));
    }
    label.append(" | ").append(DAY.format(memory.occurredAt()));
    if (memory.confidence() < 1) {
      label.append(String.format(Locale.ROOT, " | confidence %.2f", memory.confidence()));
    }
    return "- [" + label + "] " + text;
  }
}
