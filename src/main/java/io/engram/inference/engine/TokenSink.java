package io.engram.inference.engine;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Where an engine delivers its output, as it is produced. The engine calls {@link #begin()} once
 * it has accepted the request (for a remote engine: the upstream answered 200), so a failure
 * before then can still be an HTTP error status; then {@link #text} for each piece, in order.
 */
public interface TokenSink {

  void begin();

  /**
   * Says which deployment answers and after how many attempts, once one accepted the request and
   * before {@link #begin()}: a route shows it in its response's headers. Engines that do not route
   * do not call it; sinks that wrap another pass it on.
   */
  default void answeredBy(String deployment, int attempts) {}

  /** Delivers one piece; throws {@link ClientGoneException} when the caller went away. */
  void text(String piece);

  /**
   * Registers how to abort the generation when the sink learns, between pieces, that the caller
   * left (a keep-alive write failed during a long silence). Sinks that cannot tell ignore it.
   */
  default void onClientGone(Runnable abort) {}

  /**
   * Delivers one streamed piece of the model's tool calls, in OpenAI's delta form (an array of
   * {@code {index, id?, type?, function: {name?, arguments?}}}). Only engines that pass tools
   * through call it, and only for requests that offered tools.
   */
  default void toolCalls(JsonNode deltas) {}

  /**
   * Delivers one choice of a streamed chunk whole, in OpenAI's chunk form ({@code index}, {@code
   * delta}, {@code logprobs}, {@code finish_reason}), for a request that {@link
   * GenerationRequest#relaysChoices asked for several choices or log probabilities}. Only the chat
   * completions stream takes such requests; elsewhere the first choice's text and calls are
   * delivered as usual (and the routes refuse those fields by name).
   */
  default void choice(JsonNode choice) {
    firstChoice(this, choice);
  }

  /** Delivers to {@code sink} the first choice's text and tool calls of a relayed chunk. */
  static void firstChoice(TokenSink sink, JsonNode choice) {
    if (choice.path("index").asInt(0) != 0) {
      return;
    }
    JsonNode content = choice.path("delta").path("content");
    if (content.isTextual() && !content.asText().isEmpty()) {
      sink.text(content.asText());
    }
    JsonNode calls = choice.path("delta").get("tool_calls");
    if (calls != null && calls.isArray() && !calls.isEmpty()) {
      sink.toolCalls(calls);
    }
  }
}
