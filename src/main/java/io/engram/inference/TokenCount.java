package io.engram.inference;

/** A request's input tokens and who counted them: {@link #PROVIDER} or {@link #GATEWAY}. */
public record TokenCount(int inputTokens, String countedBy) {
  public static final String PROVIDER = "provider";
  public static final String GATEWAY = "gateway";
}
