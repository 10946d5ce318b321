package io.engram.inference.engine;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What an engine produced. {@code usage} is the engine's own count, or null when it gave none
 * (the gateway then counts with its tokenizer). {@code toolCalls} is the model's tool calls in
 * OpenAI's form, when it made some in a whole (not streamed) answer; null otherwise. {@code
 * choices} is the model's every choice in OpenAI's whole form (index, message, logprobs,
 * finish_reason) when the request {@link GenerationRequest#relaysChoices asked for them} and the
 * answer was whole; null otherwise ({@code text} is then the first choice's).
 */
public record Generation(
    String text, String finishReason, Usage usage, JsonNode toolCalls, JsonNode choices) {

  public Generation(String text, String finishReason, Usage usage) {
    this(text, finishReason, usage, null, null);
  }

  public Generation(String text, String finishReason, Usage usage, JsonNode toolCalls) {
    this(text, finishReason, usage, toolCalls, null);
  }

  /** Token counts of one generation. */
  public record Usage(int promptTokens, int completionTokens) {
    public int total() {
      return promptTokens + completionTokens;
    }
  }

  public static final String STOP = "stop";
  public static final String LENGTH = "length";
}
