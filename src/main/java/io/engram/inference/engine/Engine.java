package io.engram.inference.engine;

/**
 * Something that generates text: a remote OpenAI-compatible server (the remote engine) or an
 * in-process model (the local engine). A call blocks its (virtual) thread until the generation
 * ends, delivering pieces to the sink as they come.
 */
public interface Engine {

  /**
   * Generates; pieces go to {@code sink}, the whole outcome is returned.
   *
   * @throws EngineException when the engine cannot or did not finish
   * @throws ClientGoneException when the sink reported that the caller left
   */
  Generation generate(GenerationRequest request, TokenSink sink);

  /**
   * Whether the engine carries tool calling and structured output ({@code tools}, {@code
   * tool_choice}, {@code response_format} other than text, tool messages) to its model. An engine
   * that does not is never sent a request that asks for them: the gateway refuses it first.
   */
  default boolean carriesTools() {
    return false;
  }
}
