package io.engram.inference;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.platform.json.Json;
import java.util.List;
import java.util.Map;

/**
 * {@code /ws}: typed messages. {@code {type: inference, ...}} is answered by {@code {type: token,
 * content}} frames and one {@code {type: done, finish_reason, usage, memory_ids}}; errors are
 * {@code {type: error, error: {...}}}. With {@code "stream": false} the whole text comes in one
 * token frame once the generation ended, then the done frame.
 */
final class TypedFraming implements SocketFraming {

  @Override
  public boolean acceptsHeaderAuth() {
    return false;
  }

  @Override
  public boolean asksForInference(String type) {
    return "inference".equals(type);
  }

  @Override
  public String notAnInference() {
    return "Messages after auth must have \"type\": \"inference\"";
  }

  @Override
  public String piece(Replies.Header header, ChatRequest chat, String text, boolean first) {
    return chat.stream() ? token(text) : null;
  }

  private static String token(String text) {
    return Json.write(Map.of("type", "token", "content", text));
  }

  @Override
  public List<String> end(
      Replies.Header header, ChatRequest chat, ModelCall prepared, Outcome outcome) {
    ObjectNode done = Json.MAPPER.createObjectNode().put("type", "done");
    done.put("finish_reason", outcome.generation().finishReason());
    done.set("usage", Replies.usage(outcome.usage(), prepared.memoryTokens()));
    var ids = done.putArray("memory_ids");
    prepared.memoryIds().forEach(ids::add);
    return chat.stream()
        ? List.of(Json.write(done))
        : List.of(token(outcome.generation().text()), Json.write(done));
  }

  @Override
  public String error(Map<String, Object> openAiBody) {
    return Json.write(Map.of("type", "error", "error", openAiBody.get("error")));
  }
}
