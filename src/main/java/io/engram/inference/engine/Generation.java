package io.engram.inference.engine;

/**
 * What an engine produced. {@code usage} is the engine's own count, or null when it gave none
 * (the gateway then counts with its tokenizer).
 */
public record Generation(String text, String finishReason, Usage usage) {

  /** Token counts of one generation. */
  public record Usage(int promptTokens, int completionTokens) {
    public int total() {
      return promptTokens + completionTokens;
    }
  }

  public static final String STOP = "stop";
  public static final String LENGTH = "length";
}
