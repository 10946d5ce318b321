package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Sampling;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A validated {@code POST /v1/responses} request (OpenAI's Responses API), in the terms of a chat:
 * {@code input} (a string or message items with text parts) becomes the conversation's new
 * messages, {@code instructions} a system message ahead of them (not carried to the next
 * response, as OpenAI does), {@code max_output_tokens} the reply's token limit. What this gateway
 * does not carry out on this route is refused by name.
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
    MemoryOptions memory) {

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

  private static final Map<String, String> UNSUPPORTED = Map.of(
      "reasoning", "reasoning options are not supported by this gateway",
      "service_tier", "service tiers are not supported by this gateway",
      "stream_options", "stream options are not supported on /v1/responses");

  static ResponsesRequest parse(JsonBody body) {
    ChatRequest.refuseUnsupported(body, UNSUPPORTED);
    body.allowOnly(FIELDS);
    JsonNode tools = body.get("tools");
    if (tools != null && !(tools.isArray() && tools.isEmpty())) {
      throw ChatRequest.unsupported(
          "tools",
          "tools are not carried on /v1/responses yet; use POST /v1/chat/completions, which "
              + "carries them");
    }
    ChatRequest.onlyAt(
        body,
        "tool_choice",
        c -> c.isTextual() && Set.of("auto", "none").contains(c.asText()),
        "'tool_choice' must be auto or none: this route carries no tools");
    ChatRequest.onlyAt(
        body, "include", i -> i.isArray() && i.isEmpty(), "'include' is not supported");
    ChatRequest.onlyAt(
        body,
        "truncation",
        t -> t.isTextual() && t.asText().equals("disabled"),
        "only 'disabled' truncation is supported");
    ChatRequest.onlyAt(
        body,
        "text",
        t -> t.isObject()
            && (t.path("format").isMissingNode()
                || "text".equals(t.path("format").path("type").asText())),
        "only {\"format\": {\"type\": \"text\"}} is supported as 'text' on this route");
    JsonNode metadata = body.get("metadata");
    if (metadata != null && (!metadata.isObject() || metadata.size() > 16)) {
      throw ApiException.badRequest(
          "metadata", "'metadata' must be an object of at most 16 string values");
    }
    return new ResponsesRequest(
        body.optionalString("model", ChatRequest.MAX_MODEL_ID).orElse(null),
        body.optionalString("instructions", 100_000).orElse(null),
        input(body.get("input")),
        new Sampling(
            body.optionalInt("max_output_tokens", 1, Integer.MAX_VALUE).orElse(null),
            body.optionalNumber("temperature", 0, 2).orElse(1.0),
            body.optionalNumber("top_p", 0, 1).orElse(1.0),
            0.0,
            0.0,
            List.of(),
            null),
        body.optionalBoolean("stream").orElse(false),
        body.optionalBoolean("store").orElse(true),
        body.optionalString("previous_response_id", 128).orElse(null),
        body.optionalString("user", ChatRequest.MAX_USER).orElse(null),
        metadata,
        MemoryOptions.parse(body.get("memory")));
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
      messages.add(item(input.get(i), "input[" + i + "]"));
    }
    return List.copyOf(messages);
  }

  private static ChatMessage item(JsonNode item, String where) {
    String type = item.path("type").asText("message");
    if (!item.isObject() || !type.equals("message")) {
      throw ChatRequest.unsupported(
          where, where + ": only message items are supported (no function calls or outputs)");
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
}
