package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.Generation;
import io.engram.platform.json.Json;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The Responses API's objects, shaped as OpenAI's clients (the openai SDKs, the Vercel AI SDK)
 * parse them: the response, its one output message with one {@code output_text} part, usage in
 * input and output tokens, and the typed stream events, each with its {@code sequence_number}.
 */
final class ResponseObjects {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** The ids and fixed fields one response shares across its events. */
  record Ids(String response, String message, long createdAt, String model) {
    static Ids create(String model) {
      return new Ids(id("resp_"), id("msg_"), System.currentTimeMillis() / 1000, model);
    }

    private static String id(String prefix) {
      byte[] bytes = new byte[16];
      RANDOM.nextBytes(bytes);
      return prefix + HexFormat.of().formatHex(bytes);
    }
  }

  private ResponseObjects() {}

  /**
   * The response object. {@code text} null: in progress, no output yet; {@code usage} null: not
   * counted yet.
   */
  static ObjectNode response(
      Ids ids,
      ResponsesRequest request,
      String status,
      String text,
      List<ObjectNode> calls,
      Generation.Usage usage,
      int memoryTokens) {
    ObjectNode response = Json.MAPPER
        .createObjectNode()
        .put("id", ids.response())
        .put("object", "response")
        .put("created_at", ids.createdAt())
        .put("status", status)
        .putNull("error")
        .putNull("incomplete_details")
        .put("instructions", request.instructions())
        .put("max_output_tokens", request.sampling().maxTokens())
        .put("model", ids.model());
    var output = response.putArray("output");
    if (text != null && (!text.isEmpty() || calls.isEmpty())) {
      output.add(message(ids, text, "completed"));
    }
    output.addAll(calls);
    response.put(
        "parallel_tool_calls",
        request.tooling() == null
            || request.tooling().path("parallel_tool_calls").asBoolean(true));
    response.put("previous_response_id", request.previousResponseId());
    response.put("store", request.store());
    response.put("temperature", request.sampling().temperature());
    response.putObject("text").set("format", textFormat(request.tooling()));
    response.put("tool_choice", "auto");
    var tools = response.putArray("tools");
    if (request.tooling() != null) {
      request.tooling().path("tools").forEach(tool -> {
        ObjectNode flat = tools.addObject().put("type", "function");
        flat.setAll((ObjectNode) tool.get("function"));
      });
    }
    response.put("top_p", request.sampling().topP());
    response.put("truncation", "disabled");
    response.put("user", request.user());
    response.set(
        "metadata",
        request.metadata() == null ? Json.MAPPER.createObjectNode() : request.metadata());
    if (usage == null) {
      response.putNull("usage");
    } else {
      ObjectNode counted = response.putObject("usage");
      counted.put("input_tokens", usage.promptTokens());
      counted.putObject("input_tokens_details").put("cached_tokens", 0);
      counted.put("output_tokens", usage.completionTokens());
      counted.putObject("output_tokens_details").put("reasoning_tokens", 0);
      counted.put("total_tokens", usage.total());
      counted.put("memory_tokens", memoryTokens);
    }
    return response;
  }

  static ObjectNode message(Ids ids, String text, String status) {
    ObjectNode message = Json.MAPPER
        .createObjectNode()
        .put("type", "message")
        .put("id", ids.message())
        .put("status", status)
        .put("role", "assistant");
    var content = message.putArray("content");
    if (text != null) {
      content.add(part(text));
    }
    return message;
  }

  static ObjectNode part(String text) {
    ObjectNode part = Json.MAPPER.createObjectNode().put("type", "output_text").put("text", text);
    part.putArray("annotations");
    return part;
  }

  /** The request's output format in the Responses API's flat form (the chat's, turned back). */
  private static ObjectNode textFormat(ObjectNode tooling) {
    JsonNode chat = tooling == null ? null : tooling.get("response_format");
    if (chat == null) {
      return Json.MAPPER.createObjectNode().put("type", "text");
    }
    ObjectNode format =
        Json.MAPPER.createObjectNode().put("type", chat.path("type").asText());
    if (chat.path("json_schema").isObject()) {
      format.setAll((ObjectNode) chat.get("json_schema"));
    }
    return format;
  }

  /** A function call the model made, as the Responses API's output item. */
  static ObjectNode functionCall(
      String itemId, String callId, String name, String arguments, String status) {
    return Json.MAPPER
        .createObjectNode()
        .put("type", "function_call")
        .put("id", itemId)
        .put("call_id", callId)
        .put("name", name)
        .put("arguments", arguments)
        .put("status", status);
  }

  /** The function-call items of a whole answer's tool calls (chat form), in order. */
  static List<ObjectNode> functionCalls(JsonNode toolCalls) {
    List<ObjectNode> calls = new ArrayList<>();
    if (toolCalls != null) {
      toolCalls.forEach(call -> calls.add(functionCall(
          "fc_" + call.path("id").asText(),
          call.path("id").asText(),
          call.path("function").path("name").asText(),
          call.path("function").path("arguments").asText(""),
          "completed")));
    }
    return calls;
  }

  /** One stream event: its type, its place in the stream, and its fields. */
  static ObjectNode event(String type, int sequence) {
    return Json.MAPPER.createObjectNode().put("type", type).put("sequence_number", sequence);
  }
}
