package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Engine;
import io.engram.platform.TokenCounter;
import io.engram.platform.http.ApiException;
import java.util.List;

/** A prompt's tokens as the gateway counts them before its model does, and the context's room. */
public final class PromptTokens {
  /** OpenAI's accounting of a chat prompt: a few tokens of framing per message and for the reply. */
  public static final int PER_MESSAGE = 4;

  static final int FOR_REPLY = 3;

  /** What OpenAI charges a low-detail image; a provider's own count replaces it in the usage. */
  static final int PER_IMAGE = 85;

  private PromptTokens() {}

  public static int chat(List<ChatMessage> messages) {
    int tokens = FOR_REPLY;
    for (ChatMessage message : messages) {
      tokens += PER_MESSAGE
          + (message.content() == null ? 0 : TokenCounter.count(message.content()))
          + tooling(message.tooling());
    }
    return tokens;
  }

  /**
   * A message's tool fields, counted as text; its content parts (their text is the message's) as
   * {@link #PER_IMAGE} an image: an image's bytes are not its tokens.
   */
  private static int tooling(ObjectNode tooling) {
    if (tooling == null) {
      return 0;
    }
    JsonNode parts = tooling.get(Engine.PARTS);
    if (parts == null) {
      return TokenCounter.count(tooling.toString());
    }
    int images = 0;
    for (JsonNode part : parts) {
      images += "image_url".equals(part.path("type").asText()) ? 1 : 0;
    }
    ObjectNode rest = tooling.deepCopy();
    rest.remove(Engine.PARTS);
    return images * PER_IMAGE + (rest.isEmpty() ? 0 : TokenCounter.count(rest.toString()));
  }

  /** A 400 context_length_exceeded when the prompt and the reply's room pass the context. */
  public static void checkContext(int tokens, int contextLength) {
    if (tokens > contextLength) {
      throw ApiException.invalid(
          "context_length_exceeded",
          "messages",
          "This model's context is " + contextLength + " tokens; the messages and max_tokens need "
              + tokens);
    }
  }
}
