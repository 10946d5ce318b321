package io.engram.inference.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.List;

/**
 * Which part of a request an engine cannot carry out ({@link Engine#carries}): the sampling fields
 * the client set, what it asked beyond them (tools, structured output, the parameters passed on),
 * tool turns in the conversation, images in a message. Asked of a model's engine before any work
 * (a 400 naming the part), and of each deployment of a routed model when it is about to be tried.
 */
public final class Carrying {
  private Carrying() {}

  /** The first part of the request the engine cannot carry out, as a param name; null: none. */
  public static String firstNotCarried(Engine engine, GenerationRequest request) {
    return firstNotCarried(
        engine,
        request.sampling(),
        request.tooling(),
        request.isChat() ? request.messages() : List.of());
  }

  /** The same for a request's parts before it is one request. */
  public static String firstNotCarried(
      Engine engine, Sampling sampling, ObjectNode asked, List<ChatMessage> messages) {
    String param = firstNotCarried(engine, sampling.asSent());
    if (param == null) {
      param = firstNotCarried(engine, asked);
    }
    if (param == null
        && messages.stream()
            .anyMatch(m -> m.tooling() != null
                && (m.tooling().has("tool_calls") || m.tooling().has("tool_call_id")))
        && !engine.carries("tools", Json.MAPPER.nullNode())) {
      param = "messages";
    }
    for (int i = 0; param == null && i < messages.size(); i++) {
      ObjectNode tooling = messages.get(i).tooling();
      if (tooling != null
          && tooling.has(Engine.PARTS)
          && !engine.carries(Engine.IMAGES, tooling.get(Engine.PARTS))) {
        param = "messages[" + i + "].content";
      }
    }
    return param;
  }

  private static String firstNotCarried(Engine engine, ObjectNode fields) {
    if (fields != null) {
      for (var field : fields.properties()) {
        if (!engine.carries(field.getKey(), field.getValue())) {
          return field.getKey();
        }
      }
    }
    return null;
  }
}
