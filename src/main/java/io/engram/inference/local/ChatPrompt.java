package io.engram.inference.local;

import com.github.tjake.jlama.safetensors.prompt.PromptContext;
import com.github.tjake.jlama.safetensors.prompt.PromptSupport;
import io.engram.inference.engine.ChatMessage;
import java.util.List;

/**
 * A conversation rendered by the model's chat template. The local engine and the trainer render
 * with this one method, so a fine-tuned model is trained on exactly the text it is later served.
 */
public final class ChatPrompt {
  private ChatPrompt() {}

  /** The conversation as the template writes it; with {@code generation}, the assistant's turn opened. */
  public static PromptContext render(
      PromptSupport support, List<ChatMessage> messages, boolean generation) {
    PromptSupport.Builder builder = support.builder().addGenerationPrompt(generation);
    for (ChatMessage message : messages) {
      switch (message.role()) {
        case ChatMessage.SYSTEM -> builder.addSystemMessage(message.content());
        case ChatMessage.ASSISTANT -> builder.addAssistantMessage(message.content());
        default -> builder.addUserMessage(message.content());
      }
    }
    return builder.build();
  }
}
