package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.Set;

/**
 * An Anthropic Messages API request ({@code POST /v1/messages}) as the chat it is: {@code system}
 * the first message, each turn's blocks the chat's messages ({@code text} the content, an
 * assistant's {@code tool_use} blocks its tool calls, a user's {@code tool_result} blocks tool
 * messages ahead of its words), {@code tools} with their {@code input_schema} the chat's function
 * tools, {@code tool_choice} ({@code auto}, {@code any}, {@code tool}, {@code none}) the chat's,
 * {@code stop_sequences} its {@code stop}, {@code metadata.user_id} its {@code user}. The chat's
 * own checks then apply. What has no equal in a chat (images, documents, thinking, server tools,
 * {@code top_k}) is refused by name.
 */
final class MessagesRequest {
  private static final Set<String> FIELDS = Set.of(
      "model",
      "max_tokens",
      "messages",
      "system",
      "temperature",
      "top_p",
      "stop_sequences",
      "stream",
      "tools",
      "tool_choice",
      "metadata",
      "memory");

  /** What {@code POST /v1/messages/count_tokens} takes: the input, nothing of generation. */
  private static final Set<String> COUNTED_FIELDS =
      Set.of("model", "messages", "system", "tools", "tool_choice");

  private MessagesRequest() {}

  static ChatRequest parse(JsonBody body) {
    allowOnly(body, FIELDS, "/v1/messages");
    ObjectNode chat = input(body);
    chat.put(
        "max_tokens",
        body.optionalInt("max_tokens", 1, Integer.MAX_VALUE)
            .orElseThrow(() -> ApiException.badRequest("max_tokens", "'max_tokens' is required")));
    body.optionalNumber("temperature", 0, 1)
        .ifPresent(t -> chat.set("temperature", body.get("temperature")));
    body.optionalNumber("top_p", 0, 1).ifPresent(p -> chat.set("top_p", body.get("top_p")));
    JsonNode stops = body.get("stop_sequences");
    if (stops != null) {
      // An array of strings, white space kept ("\n\nHuman:"); the chat's checks then apply.
      if (!stops.isArray() || !stops.valueStream().allMatch(JsonNode::isTextual)) {
        throw ApiException.badRequest(
            "stop_sequences", "'stop_sequences' must be an array of strings");
      }
      chat.set("stop", stops);
    }
    body.optionalBoolean("stream").ifPresent(stream -> chat.put("stream", stream));
    if (body.has("memory")) {
      chat.set("memory", body.get("memory"));
    }
    body.optionalObject("metadata").ifPresent(metadata -> {
      JsonNode user = metadata.get("user_id");
      if (user != null && !user.isNull() && !user.isTextual()) {
        throw ApiException.badRequest("metadata.user_id", "'metadata.user_id' must be a string");
      }
      if (user != null && !user.isNull()) {
        chat.set("user", user);
      }
    });
    return ChatRequest.parse(JsonBody.received(chat));
  }

  /** A count_tokens request as the chat it counts (its reply's limit is no part of the count). */
  static ChatRequest parseCounted(JsonBody body) {
    allowOnly(body, COUNTED_FIELDS, "/v1/messages/count_tokens");
    ObjectNode chat = input(body);
    chat.put("max_tokens", 1);
    chat.put("memory", false);
    return ChatRequest.parse(JsonBody.received(chat));
  }

  private static void allowOnly(JsonBody body, Set<String> fields, String route) {
    for (var names = body.node().fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!fields.contains(name)) {
        throw ChatRequest.unsupported(
            name,
            "'" + name + "' is not supported on " + route + "; it takes "
                + String.join(", ", fields.stream().sorted().toList()));
      }
    }
  }

  /** The model, the system text, the turns and the tools, as the chat's. */
  private static ObjectNode input(JsonBody body) {
    ObjectNode chat = Json.MAPPER.createObjectNode();
    chat.put("model", body.requiredString("model", ChatRequest.MAX_MODEL_ID));
    ArrayNode messages = chat.putArray("messages");
    system(body.get("system"), messages);
    turns(body.get("messages"), messages);
    tools(body, chat);
    return chat;
  }

  private static void system(JsonNode system, ArrayNode messages) {
    if (system == null || system.isNull()) {
      return;
    }
    String text = system.isTextual() ? system.asText() : texts(system, "system");
    messages.addObject().put("role", "system").put("content", text);
  }

  /** The text of a list of text blocks; anything else in it is refused. */
  private static String texts(JsonNode blocks, String where) {
    if (!blocks.isArray()) {
      throw ApiException.badRequest(where, "'" + where + "' must be a string or a list of blocks");
    }
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < blocks.size(); i++) {
      JsonNode block = blocks.get(i);
      if (!"text".equals(block.path("type").asText()) || !block.path("text").isTextual()) {
        throw ChatRequest.unsupported(
            where + "[" + i + "]",
            "Only text blocks are carried here, not '" + block.path("type").asText() + "'");
      }
      text.append(text.isEmpty() ? "" : "\n").append(block.get("text").asText());
    }
    return text.toString();
  }

  private static void turns(JsonNode turns, ArrayNode messages) {
    if (turns == null || !turns.isArray() || turns.isEmpty()) {
      throw ApiException.badRequest("messages", "'messages' must be a non-empty array of turns");
    }
    for (int i = 0; i < turns.size(); i++) {
      String where = "messages[" + i + "]";
      JsonNode turn = turns.get(i);
      String role = turn.path("role").asText();
      if (!role.equals("user") && !role.equals("assistant")) {
        throw ApiException.badRequest(where + ".role", where + ".role must be user or assistant");
      }
      JsonNode content = turn.get("content");
      if (content != null && content.isTextual()) {
        messages.addObject().put("role", role).put("content", content.asText());
        continue;
      }
      if (content == null || !content.isArray()) {
        throw ApiException.badRequest(
            where + ".content", where + ".content must be a string or a list of blocks");
      }
      blocks(role, content, where + ".content", messages);
    }
  }

  /** One turn's blocks: tool results first (they answer the previous turn), then words, calls. */
  private static void blocks(String role, JsonNode blocks, String where, ArrayNode messages) {
    StringBuilder text = new StringBuilder();
    ArrayNode parts = Json.MAPPER.createArrayNode();
    boolean images = false;
    ArrayNode calls = Json.MAPPER.createArrayNode();
    for (int j = 0; j < blocks.size(); j++) {
      JsonNode block = blocks.get(j);
      String at = where + "[" + j + "]";
      switch (block.path("type").asText()) {
        case "text" -> {
          text.append(block.path("text").asText());
          parts.addObject().put("type", "text").put("text", block.path("text").asText());
        }
        case "image" -> {
          parts
              .addObject()
              .put("type", "image_url")
              .putObject("image_url")
              .put("url", imageUrl(block.path("source"), at));
          images = true;
        }
        case "tool_use" -> {
          if (!role.equals("assistant")) {
            throw ApiException.badRequest(at, "tool_use blocks belong to assistant turns");
          }
          ObjectNode call =
              calls.addObject().put("id", block.path("id").asText()).put("type", "function");
          call.putObject("function")
              .put("name", block.path("name").asText())
              .put(
                  "arguments",
                  Json.write(
                      block.path("input").isObject()
                          ? block.get("input")
                          : Json.MAPPER.createObjectNode()));
        }
        case "tool_result" -> {
          if (!role.equals("user")) {
            throw ApiException.badRequest(at, "tool_result blocks belong to user turns");
          }
          JsonNode result = block.get("content");
          String answer = result == null || result.isNull()
              ? ""
              : result.isTextual() ? result.asText() : texts(result, at + ".content");
          messages
              .addObject()
              .put("role", "tool")
              .put("tool_call_id", block.path("tool_use_id").asText())
              .put(
                  "content", block.path("is_error").asBoolean(false) ? "Error: " + answer : answer);
        }
        default ->
          throw ChatRequest.unsupported(
              at,
              "'" + block.path("type").asText() + "' blocks are not carried on /v1/messages "
                  + "(text, tool_use and tool_result are)");
      }
    }
    if (!text.isEmpty() || !calls.isEmpty() || images) {
      ObjectNode message = messages.addObject().put("role", role);
      if (images) {
        message.set("content", parts);
      } else if (text.isEmpty()) {
        message.putNull("content");
      } else {
        message.put("content", text.toString());
      }
      if (!calls.isEmpty()) {
        message.set("tool_calls", calls);
      }
    }
  }

  /** An image block's source as the chat's image URL: a data URL for base64 data, else its URL. */
  private static String imageUrl(JsonNode source, String where) {
    return switch (source.path("type").asText()) {
      case "base64" ->
        "data:" + source.path("media_type").asText() + ";base64,"
            + source.path("data").asText();
      case "url" -> source.path("url").asText();
      default ->
        throw ChatRequest.unsupported(
            where + ".source", "Image sources are base64 data or a URL (files are not carried)");
    };
  }

  /** Anthropic's client tools and tool choice in the chat's form. */
  private static void tools(JsonBody body, ObjectNode chat) {
    JsonNode tools = body.get("tools");
    if (tools != null) {
      if (!tools.isArray()) {
        throw ApiException.badRequest("tools", "'tools' must be an array of tools");
      }
      ArrayNode converted = chat.putArray("tools");
      for (int i = 0; i < tools.size(); i++) {
        JsonNode tool = tools.get(i);
        if (tool.has("type") && !"custom".equals(tool.path("type").asText())) {
          throw ChatRequest.unsupported(
              "tools[" + i + "]",
              "Only client tools ({name, description, input_schema}) are "
                  + "carried, not Anthropic's server tools");
        }
        ObjectNode function = converted.addObject().put("type", "function").putObject("function");
        function.set("name", tool.get("name"));
        if (tool.has("description")) {
          function.set("description", tool.get("description"));
        }
        if (tool.has("input_schema")) {
          function.set("parameters", tool.get("input_schema"));
        }
      }
    }
    JsonNode choice = body.get("tool_choice");
    if (choice == null || choice.isNull()) {
      return;
    }
    switch (choice.path("type").asText()) {
      case "auto" -> chat.put("tool_choice", "auto");
      case "any" -> chat.put("tool_choice", "required");
      case "none" -> chat.put("tool_choice", "none");
      case "tool" -> {
        ObjectNode named = chat.putObject("tool_choice").put("type", "function");
        named.putObject("function").set("name", choice.get("name"));
      }
      default ->
        throw ApiException.badRequest(
            "tool_choice.type", "'tool_choice.type' must be auto, any, tool or none");
    }
    if (choice.path("disable_parallel_tool_use").asBoolean(false)) {
      chat.put("parallel_tool_calls", false);
    }
  }
}
