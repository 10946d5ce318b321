package io.engram.inference.engine;

/** One message of a conversation, as the engines receive it: role system, user or assistant. */
public record ChatMessage(String role, String content) {
  public static final String SYSTEM = "system";
  public static final String USER = "user";
  public static final String ASSISTANT = "assistant";
}
