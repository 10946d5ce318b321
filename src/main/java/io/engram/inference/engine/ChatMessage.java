package io.engram.inference.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;

/**
 * One message of a conversation, as the engines receive it: role system, user, assistant or tool.
 * {@code tooling} holds a message's tool-call fields as the client sent them (an assistant's
 * {@code tool_calls}, a tool answer's {@code tool_call_id}), or null; {@code content} may be null
 * for an assistant message that only calls tools.
 */
public record ChatMessage(String role, String content, ObjectNode tooling) {
  public static final String SYSTEM = "system";
  public static final String USER = "user";
  public static final String ASSISTANT = "assistant";
  public static final String TOOL = "tool";

  public ChatMessage(String role, String content) {
    this(role, content, null);
  }

  /**
   * The message in the client's (OpenAI's) shape: its role and content, with its tool fields and
   * content parts (which stand in for the text) as the client sent them.
   */
  public ObjectNode toJson() {
    ObjectNode message = Json.MAPPER.createObjectNode().put("role", role).put("content", content);
    if (tooling != null) {
      message.setAll(tooling);
    }
    return message;
  }
}
