package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.Set;

/**
 * Tool calling and structured output in a chat request, checked for OpenAI's shapes and kept as
 * sent, for an engine that carries them to its model: {@code tools} (function tools), {@code
 * tool_choice}, {@code parallel_tool_calls}, {@code response_format} ({@code json_object} or
 * {@code json_schema}; {@code text} is the default and kept out), and per message an assistant's
 * {@code tool_calls} and a tool answer's {@code tool_call_id}.
 */
final class ToolFields {
  private static final Set<String> CHOICES = Set.of("none", "auto", "required");

  private ToolFields() {}

  /** The request's tool fields, or null when it has none (or only the default text format). */
  static ObjectNode parse(JsonBody body) {
    ObjectNode tooling = Json.MAPPER.createObjectNode();
    JsonNode tools = body.get("tools");
    if (tools != null) {
      tooling.set("tools", tools(tools));
    }
    JsonNode choice = body.get("tool_choice");
    if (choice != null) {
      tooling.set("tool_choice", choice(choice, tools != null));
    }
    JsonNode parallel = body.get("parallel_tool_calls");
    if (parallel != null) {
      if (!parallel.isBoolean()) {
        throw ApiException.badRequest(
            "parallel_tool_calls", "'parallel_tool_calls' must be true or false");
      }
      tooling.set("parallel_tool_calls", parallel);
    }
    JsonNode format = body.get("response_format");
    if (format != null && !isText(format)) {
      tooling.set("response_format", format(format));
    }
    return tooling.isEmpty() ? null : tooling;
  }

  private static JsonNode tools(JsonNode tools) {
    if (!tools.isArray() || tools.size() > ChatRequest.MAX_TOOLS) {
      throw ApiException.badRequest(
          "tools", "'tools' must be an array of at most " + ChatRequest.MAX_TOOLS + " tools");
    }
    for (int i = 0; i < tools.size(); i++) {
      JsonNode tool = tools.get(i);
      String where = "tools[" + i + "]";
      if (!tool.isObject() || !"function".equals(tool.path("type").asText())) {
        throw ApiException.badRequest(
            where, where + " must be {\"type\": \"function\", \"function\": {...}}");
      }
      JsonNode function = tool.path("function");
      if (!function.isObject()
          || !function.path("name").isTextual()
          || !function.path("name").asText().matches("[a-zA-Z0-9_-]{1,64}")) {
        throw ApiException.badRequest(
            where + ".function.name",
            where + ".function.name must be 1 to 64 letters, digits, underscores or dashes");
      }
      JsonNode parameters = function.get("parameters");
      if (parameters != null && !parameters.isObject()) {
        throw ApiException.badRequest(
            where + ".function.parameters",
            where + ".function.parameters must be a JSON Schema object");
      }
    }
    return tools;
  }

  private static JsonNode choice(JsonNode choice, boolean hasTools) {
    boolean valid = (choice.isTextual() && CHOICES.contains(choice.asText()))
        || (choice.isObject()
            && "function".equals(choice.path("type").asText())
            && choice.path("function").path("name").isTextual());
    if (!valid) {
      throw ApiException.badRequest(
          "tool_choice",
          "'tool_choice' must be none, auto, required or {\"type\": \"function\", \"function\": "
              + "{\"name\": ...}}");
    }
    if (!hasTools && !(choice.isTextual() && choice.asText().equals("none"))) {
      throw ApiException.badRequest("tool_choice", "'tool_choice' needs 'tools'");
    }
    return choice;
  }

  private static boolean isText(JsonNode format) {
    return format.isObject()
        && format.size() == 1
        && "text".equals(format.path("type").asText());
  }

  private static JsonNode format(JsonNode format) {
    String type = format.path("type").asText("");
    boolean valid = switch (type) {
      case "json_object" -> format.size() == 1;
      case "json_schema" ->
        format.path("json_schema").isObject()
            && format.path("json_schema").path("name").isTextual()
            && (!format.path("json_schema").has("schema")
                || format.path("json_schema").path("schema").isObject());
      default -> false;
    };
    if (!valid) {
      throw ApiException.badRequest(
          "response_format",
          "'response_format' must be {\"type\": \"text\"}, {\"type\": \"json_object\"} or "
              + "{\"type\": \"json_schema\", \"json_schema\": {\"name\": ..., \"schema\": {...}}}");
    }
    return format;
  }

  /** A message's tool fields, checked against its role; null when it has none. */
  static ObjectNode message(JsonNode node, String role, String where) {
    JsonNode calls = node.get("tool_calls");
    JsonNode callId = node.get("tool_call_id");
    ObjectNode tooling = Json.MAPPER.createObjectNode();
    if (calls != null && !calls.isNull()) {
      if (!role.equals(ChatMessage.ASSISTANT) || !calls.isArray() || calls.isEmpty()) {
        throw ApiException.badRequest(
            where + ".tool_calls",
            where + ".tool_calls is a non-empty array, on assistant messages only");
      }
      var kept = tooling.putArray("tool_calls");
      for (JsonNode call : calls) {
        if (!call.path("id").isTextual() || !call.path("function").path("name").isTextual()) {
          throw ApiException.badRequest(
              where + ".tool_calls",
              where + ".tool_calls entries have an id and a function with a name");
        }
        // OpenAI's form only: clients add their own parsed forms of the arguments.
        ObjectNode clean =
            kept.addObject().put("id", call.get("id").asText()).put("type", "function");
        clean
            .putObject("function")
            .put("name", call.path("function").path("name").asText())
            .put("arguments", call.path("function").path("arguments").asText(""));
      }
    }
    if (role.equals(ChatMessage.TOOL)) {
      if (callId == null || !callId.isTextual() || callId.asText().isEmpty()) {
        throw ApiException.badRequest(
            where + ".tool_call_id", "A tool message needs the 'tool_call_id' it answers");
      }
      tooling.set("tool_call_id", callId);
    } else if (callId != null && !callId.isNull()) {
      throw ApiException.badRequest(
          where + ".tool_call_id", where + ".tool_call_id belongs on tool messages only");
    }
    return tooling.isEmpty() ? null : tooling;
  }
}
