package io.engram.inference.engine;

/**
 * Where an engine delivers its output, as it is produced. The engine calls {@link #begin()} once
 * it has accepted the request (for a remote engine: the upstream answered 200), so a failure
 * before then can still be an HTTP error status; then {@link #text} for each piece, in order.
 */
public interface TokenSink {

  void begin();

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
  default void toolCalls(com.fasterxml.jackson.databind.JsonNode deltas) {}
}
