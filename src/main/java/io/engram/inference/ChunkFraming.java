package io.engram.inference;

import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code /v1/chat/stream}: the chat completion request as is (no type, or type inference),
 * answered by the frames an SSE stream carries (chunk objects, then {@code [DONE]}), or by one
 * whole completion when {@code stream} is false; errors are OpenAI's {@code {error: {...}}}.
 */
final class ChunkFraming implements SocketFraming {

  @Override
  public boolean acceptsHeaderAuth() {
    return true;
  }

  @Override
  public boolean asksForInference(String type) {
    return type == null || "inference".equals(type);
  }

  @Override
  public String notAnInference() {
    return "Send {model, messages, stream}";
  }

  @Override
  public String piece(Replies.Header header, ChatRequest chat, String text, boolean first) {
    return chat.stream() ? Replies.piece(header, text, first, chat.includeUsage()) : null;
  }

  @Override
  public List<String> end(
      Replies.Header header, ChatRequest chat, ModelCall prepared, Outcome outcome) {
    if (!chat.stream()) {
      return List.of(Json.write(
          Replies.whole(header, outcome.generation(), outcome.usage(), prepared.memoryTokens())));
    }
    List<String> frames = new ArrayList<>();
    frames.add(Replies.finish(header, outcome.generation().finishReason(), chat.includeUsage()));
    if (chat.includeUsage()) {
      frames.add(Replies.usageChunk(header, outcome.usage(), prepared.memoryTokens()));
    }
    frames.add("[DONE]");
    return frames;
  }

  @Override
  public String error(Map<String, Object> openAiBody) {
    return Json.write(openAiBody);
  }
}
