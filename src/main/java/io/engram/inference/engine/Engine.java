package io.engram.inference.engine;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Something that generates text: a remote OpenAI-compatible server (the remote engine) or an
 * in-process model (the local engine). A call blocks its (virtual) thread until the generation
 * ends, delivering pieces to the sink as they come.
 */
public interface Engine {
  /**
   * What {@link #carries} is asked for a message whose content parts hold images: the value is the
   * parts (OpenAI's {@code text} and {@code image_url} parts), kept in the message's {@link
   * ChatMessage#tooling} under {@code content}.
   */
  String IMAGES = "image_content";

  /** The key of {@link ChatMessage#tooling} that holds a message's content parts with images. */
  String PARTS = "content";

  /** An image part's data URL ({@code data:image/png;base64,...}): its media type, then data. */
  static String[] dataUrl(String url) {
    int comma = url.indexOf(',');
    if (!url.startsWith("data:") || comma < 0 || !url.substring(0, comma).endsWith(";base64")) {
      return null;
    }
    return new String[] {url.substring(5, comma - 7), url.substring(comma + 1)};
  }

  /**
   * Generates; pieces go to {@code sink}, the whole outcome is returned.
   *
   * @throws EngineException when the engine cannot or did not finish
   * @throws ClientGoneException when the sink reported that the caller left
   */
  Generation generate(GenerationRequest request, TokenSink sink);

  /**
   * Whether the engine carries out this field of a request at this value: a sampling field the
   * client set ({@link Sampling#FIELDS}), a field of {@link GenerationRequest#tooling} ({@code
   * tools}, {@code tool_choice}, {@code parallel_tool_calls}, {@code response_format}, {@code n},
   * {@code logprobs}, {@code top_logprobs}, {@code logit_bias}; {@code tools} also stands for tool
   * messages), or any other parameter the client sent. An engine is never sent a request with a
   * field it does not carry: the gateway refuses it first, by name (or, for an engine that calls
   * out, drops it when the organization chose so: the engine then leaves it out).
   */
  default boolean carries(String field, JsonNode value) {
    return Sampling.FIELDS.contains(field);
  }

  /**
   * The server this engine calls over the network, if any: the organization's outbound firewall
   * admits each generation to it first. Empty for an engine inside this process.
   */
  default java.util.Optional<java.net.URI> origin() {
    return java.util.Optional.empty();
  }

  /**
   * The request's input tokens as the model's provider counts them, where its API counts (empty:
   * it cannot, and the gateway's own count stands). Nothing is generated.
   *
   * @throws EngineException when the provider could not be asked
   */
  default java.util.OptionalInt countTokens(GenerationRequest request) {
    return java.util.OptionalInt.empty();
  }

  /**
   * Whether the engine's model runs on another server (a provider), not in this process; such a
   * model can be fine-tuned by an upstream trainer.
   */
  default boolean callsOut() {
    return origin().isPresent();
  }
}
