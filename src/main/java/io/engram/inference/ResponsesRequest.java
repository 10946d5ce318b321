package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Sampling;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A validated {@code POST /v1/responses} request (OpenAI's Responses API), in the terms of a chat:
 * {@code input} (a string or message items with text parts) becomes the conversation's new
 * messages, {@code instructions} a system message ahead of them (not carried to the next
 * response, as OpenAI does), {@code max_output_tokens} the reply's token limit. Function tools
 * ({@code tools}, {@code tool_choice}, {@code parallel_tool_calls}) and the input's
 * {@code function_call} and {@code function_call_output} items become the chat's tools, assistant
 * tool calls and tool messages ({@code tooling}, checked by {@link ToolFields}), so they reach an
 * upstream model as on /v1/chat/completions. What this gateway does not carry out on this route is
 * refused by name.
 */
record ResponsesRequest(
    String model,
    String instructions,
    List<ChatMessage> input,
    Sampling sampling,
    boolean stream,
    boolean store,
    String previousResponseId,
    String user,
    JsonNode metadata,
    MemoryOptions memory,
    ObjectNode tooling) {
  /** The chat's names of the fields a Responses request renames, to the names it sent them as. */
  static final java.util.Map<String, String> AS_SENT = java.util.Map.of(
      "response_format", "text.format",
      "reasoning_effort", "reasoning.effort",
      "verbosity", "text.verbosity",
      "max_tokens", "max_output_tokens");

  static final Set<String> FIELDS = Set.of(
      "model",
      "input",
      "instructions",
      "stream",
      "temperature",
      "top_p",
      "max_output_tokens",
      "previous_response_id",
      "store",
      "user",
      "metadata",
      "memory",
      "text",
      "tools",
      "tool_choice",
      "parallel_tool_calls",
      "truncation",
      "include",
      "service_tier",
      "reasoning",
      "stream_options");

  private static final Map<String, String> UNSUPPORTED =
      Map.of("stream_options", "stream options are not supported on /v1/responses");

  static ResponsesRequest parse(JsonBody body) {
    ChatRequest.refuseUnsupported(body, UNSUPPORTED);
    body.allowOnly(FIELDS);
    ObjectNode tooling = tooling(body);
    ChatRequest.onlyAt(
        body, "include", i -> i.isArray() && i.isEmpty(), "'include' is not supported");
    ChatRequest.onlyAt(
        body,
        "truncation",
        t -> t.isTextual() && t.asText().equals("disabled"),
        "only 'disabled' truncation is supported");
    JsonNode metadata = body.get("metadata");
    if (metadata != null && (!metadata.isObject() || metadata.size() > 16)) {
      throw ApiException.badRequest(
          "metadata", "'metadata' must be an object of at most 16 string values");
    }
    return new ResponsesRequest(
        body.optionalString("model", ChatRequest.MAX_MODEL_ID).orElse(null),
        body.optionalString("instructions", 100_000).orElse(null),
        input(body.get("input")),
        sampling(body),
        body.optionalBoolean("stream").orElse(false),
        body.optionalBoolean("store").orElse(true),
        body.optionalString("previous_response_id", 128).orElse(null),
        body.optionalString("user", ChatRequest.MAX_USER).orElse(null),
        metadata,
        MemoryOptions.parse(body.get("memory")),
        tooling);
  }

  /**
   * The reply's limit and sampling; as sent, under the chat's names ({@code max_output_tokens} is
   * the chat's {@code max_completion_tokens}), so an upstream gets only what the client set.
   */
  private static Sampling sampling(JsonBody body) {
    Integer max = body.optionalInt("max_output_tokens", 1, Integer.MAX_VALUE).orElse(null);
    ObjectNode asSent = Json.MAPPER.createObjectNode();
    if (max != null) {
      asSent.put("max_completion_tokens", max);
    }
    for (String field : List.of("temperature", "top_p")) {
      if (body.get(field) != null && !body.get(field).isNull()) {
        asSent.set(field, body.get(field));
      }
    }
    return new Sampling(
        max,
        body.optionalNumber("temperature", 0, 2).orElse(1.0),
        body.optionalNumber("top_p", 0, 1).orElse(1.0),
        0.0,
        0.0,
        List.of(),
        null,
        asSent);
  }

  /**
   * What the Responses API asks of the model beyond the chat's tools that a chat upstream takes
   * under another name: {@code reasoning.effort} is the chat's {@code reasoning_effort}, {@code
   * text.verbosity} its {@code verbosity}; {@code service_tier} is the same in both. Engines that
   * do not carry them refuse them by name.
   */
  private static void passedOn(JsonBody body, ObjectNode chat) {
    JsonNode reasoning = body.get("reasoning");
    if (reasoning != null && !reasoning.isNull()) {
      if (!reasoning.isObject()) {
        throw ApiException.badRequest("reasoning", "'reasoning' must be an object");
      }
      for (var field : reasoning.properties()) {
        if (!field.getKey().equals("effort")) {
          throw ChatRequest.unsupported(
              "reasoning." + field.getKey(),
              "Only 'reasoning.effort' is carried to the model on this route");
        }
        chat.set("reasoning_effort", field.getValue());
      }
    }
    JsonNode tier = body.get("service_tier");
    if (tier != null && !tier.isNull()) {
      chat.set("service_tier", tier);
    }
    JsonNode verbosity = body.get("text") == null ? null : body.get("text").get("verbosity");
    if (verbosity != null && !verbosity.isNull()) {
      chat.set("verbosity", verbosity);
    }
  }

  /**
   * The Responses API's function tools in the chat's form: {@code {type: function, name,
   * description, parameters, strict}} becomes {@code {type: function, function: {...}}}; the
   * chat's checks then apply (the shape, the names, tool_choice needing tools).
   */
  private static ObjectNode tooling(JsonBody body) {
    ObjectNode chat = Json.MAPPER.createObjectNode();
    JsonNode tools = body.get("tools");
    if (tools != null && !(tools.isArray() && tools.isEmpty())) {
      if (!tools.isArray()) {
        throw ApiException.badRequest("tools", "'tools' must be an array of function tools");
      }
      ArrayNode converted = chat.putArray("tools");
      for (int i = 0; i < tools.size(); i++) {
        JsonNode tool = tools.get(i);
        if (!"function".equals(tool.path("type").asText())) {
          throw ChatRequest.unsupported(
              "tools[" + i + "]",
              "Only function tools are carried (no built-in tools such as web search or files)");
        }
        ObjectNode function = converted.addObject().put("type", "function").putObject("function");
        for (String field : List.of("name", "description", "parameters", "strict")) {
          if (tool.has(field)) {
            function.set(field, tool.get(field));
          }
        }
      }
    }
    JsonNode choice = body.get("tool_choice");
    if (choice != null) {
      chat.set(
          "tool_choice",
          choice.isObject() && choice.has("name")
              ? Json.MAPPER
                  .createObjectNode()
                  .put("type", "function")
                  .set("function", Json.MAPPER.createObjectNode().set("name", choice.get("name")))
              : choice);
    }
    if (body.get("parallel_tool_calls") != null) {
      chat.set("parallel_tool_calls", body.get("parallel_tool_calls"));
    }
    JsonNode format = textFormat(body.get("text"));
    if (format != null) {
      chat.set("response_format", format);
    }
    ObjectNode tooling = ToolFields.parse(JsonBody.received(chat));
    ObjectNode passed = Json.MAPPER.createObjectNode();
    passedOn(body, passed);
    if (passed.isEmpty()) {
      return tooling;
    }
    return tooling == null ? passed : tooling.setAll(passed);
  }

  /**
   * {@code text.format} in the chat's {@code response_format} form: {@code json_schema}'s flat
   * {@code name}, {@code schema}, {@code strict}, {@code description} go under {@code
   * json_schema}; {@code text} and {@code json_object} are the same in both.
   */
  private static JsonNode textFormat(JsonNode text) {
    if (text == null) {
      return null;
    }
    if (!text.isObject() || (text.has("format") && !text.get("format").isObject())) {
      throw ApiException.badRequest(
          "text", "'text' must be an object such as {\"format\": {\"type\": \"json_object\"}}");
    }
    JsonNode format = text.get("format");
    String type = format == null ? "text" : format.path("type").asText();
    boolean valid = switch (type) {
      case "text", "json_object" -> true;
      case "json_schema" ->
        format.path("name").isTextual()
            && (!format.has("schema") || format.get("schema").isObject());
      default -> false;
    };
    if (!valid) {
      throw ApiException.badRequest(
          "text.format",
          "'text.format' must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or "
              + "{\"type\": \"json_schema\", \"name\": ..., \"schema\": {...}}");
    }
    if (!type.equals("json_schema")) {
      return format;
    }
    ObjectNode schema = Json.MAPPER.createObjectNode();
    for (String field : List.of("name", "schema", "strict", "description")) {
      if (format.has(field)) {
        schema.set(field, format.get(field));
      }
    }
    ObjectNode chat = Json.MAPPER.createObjectNode().put("type", "json_schema");
    chat.set("json_schema", schema);
    return chat;
  }

  private static List<ChatMessage> input(JsonNode input) {
    if (input == null) {
      throw ApiException.badRequest("input", "'input' is required");
    }
    if (input.isTextual()) {
      if (input.asText().isBlank()) {
        throw ApiException.badRequest("input", "'input' must not be empty");
      }
      return List.of(new ChatMessage(ChatMessage.USER, input.asText()));
    }
    if (!input.isArray() || input.isEmpty() || input.size() > ChatRequest.MAX_MESSAGES) {
      throw ApiException.badRequest(
          "input", "'input' must be a string or a non-empty array of message items");
    }
    List<ChatMessage> messages = new ArrayList<>();
    for (int i = 0; i < input.size(); i++) {
      ChatMessage message = item(input.get(i), "input[" + i + "]");
      ChatMessage last = messages.isEmpty() ? null : messages.getLast();
      if (isCallOnly(message) && last != null && isCallOnly(last)) {
        // Calls made together are one assistant turn, as the chat's tool messages expect.
        ObjectNode merged = last.tooling().deepCopy();
        ((ArrayNode) merged.get("tool_calls"))
            .addAll((ArrayNode) message.tooling().get("tool_calls"));
        messages.set(messages.size() - 1, new ChatMessage(ChatMessage.ASSISTANT, null, merged));
      } else {
        messages.add(message);
      }
    }
    return List.copyOf(messages);
  }

  private static ChatMessage item(JsonNode item, String where) {
    String type = item.path("type").asText("message");
    if (item.isObject() && type.equals("function_call")) {
      return functionCall(item, where);
    }
    if (item.isObject() && type.equals("function_call_output")) {
      if (!item.path("call_id").isTextual() || !item.path("output").isTextual()) {
        throw ApiException.badRequest(
            where, where + ": a function_call_output has a call_id and an output string");
      }
      ObjectNode tooling =
          Json.MAPPER.createObjectNode().put("tool_call_id", item.get("call_id").asText());
      return new ChatMessage(ChatMessage.TOOL, item.get("output").asText(), tooling);
    }
    if (!item.isObject() || !type.equals("message")) {
      throw ChatRequest.unsupported(
          where, where + ": message, function_call and function_call_output items are supported");
    }
    String role = switch (item.path("role").asText("")) {
      case "system", "developer" -> ChatMessage.SYSTEM;
      case "user" -> ChatMessage.USER;
      case "assistant" -> ChatMessage.ASSISTANT;
      default ->
        throw ApiException.badRequest(
            where + ".role", where + ".role must be system, developer, user or assistant");
    };
    JsonNode content = item.get("content");
    if (content != null && content.isTextual()) {
      return new ChatMessage(role, content.asText());
    }
    if (content == null || !content.isArray() || content.isEmpty()) {
      throw ApiException.badRequest(
          where + ".content", where + ".content must be a string or a list of text parts");
    }
    StringBuilder text = new StringBuilder();
    for (JsonNode part : content) {
      String partType = part.path("type").asText("");
      if (!(partType.equals("input_text") || partType.equals("output_text"))
          || !part.path("text").isTextual()) {
        throw ChatRequest.unsupported(
            where + ".content",
            where + ".content: only input_text and output_text parts are supported");
      }
      text.append(part.get("text").asText());
    }
    return new ChatMessage(role, text.toString());
  }

  private static boolean isCallOnly(ChatMessage message) {
    return message.content() == null
        && message.tooling() != null
        && message.tooling().has("tool_calls");
  }

  /** A call the model made earlier, sent back: the chat's assistant message with its tool call. */
  private static ChatMessage functionCall(JsonNode item, String where) {
    if (!item.path("call_id").isTextual() || !item.path("name").isTextual()) {
      throw ApiException.badRequest(
          where, where + ": a function_call has a call_id, a name and its arguments");
    }
    ObjectNode tooling = Json.MAPPER.createObjectNode();
    ObjectNode call = tooling
        .putArray("tool_calls")
        .addObject()
        .put("id", item.get("call_id").asText())
        .put("type", "function");
    call.putObject("function")
        .put("name", item.get("name").asText())
        .put("arguments", item.path("arguments").asText(""));
    return new ChatMessage(ChatMessage.ASSISTANT, null, tooling);
  }
}
