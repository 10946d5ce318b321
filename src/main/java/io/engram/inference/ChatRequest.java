package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Sampling;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A validated chat completion request. Engram acts on the conversation, the sampling fields, the
 * stream and its options, {@code user} and its own {@code memory}; tool calling and structured
 * output ({@code tools}, {@code tool_choice}, {@code parallel_tool_calls}, {@code
 * response_format}, tool messages, see {@link ToolFields}) and what is asked of the choices
 * ({@code n}, {@code logprobs}, {@code top_logprobs}, {@code logit_bias}, see {@link
 * ChoiceFields}) are checked for shape and kept in {@code tooling}. Every other field ({@code
 * reasoning_effort}, {@code metadata}, {@code service_tier}, {@code prediction}, {@code store},
 * and whatever OpenAI adds next) is kept as sent in {@code passedOn}: an upstream that speaks
 * OpenAI's API gets it unchanged, and an engine that cannot carry it refuses it by name (the
 * gateway asks each engine), so a client never believes it got something it did not.
 */
public record ChatRequest(
    String model,
    List<ChatMessage> messages,
    Sampling sampling,
    boolean stream,
    boolean includeUsage,
    String user,
    MemoryOptions memory,
    ObjectNode tooling,
    ObjectNode passedOn) {
  public static final int MAX_MESSAGES = 2048;
  static final int MAX_TOOLS = 128;

  /**
   * Fields of an answer that clients send back on the assistant message when they continue a
   * conversation (the openai clients' tool runners do): accepted, and not sent on to the model.
   */
  static final Set<String> ECHOED = Set.of("refusal", "annotations", "parsed", "audio");

  /** The same chat with other sampling (its reply's limit lowered, say). */
  public ChatRequest withSampling(Sampling changed) {
    return new ChatRequest(
        model, messages, changed, stream, includeUsage, user, memory, tooling, passedOn);
  }

  public static final int MAX_MODEL_ID = 256;
  public static final int MAX_USER = 256;

  /** An image given inline, as OpenAI takes it. */
  private static final Pattern DATA_IMAGE =
      Pattern.compile("(?s)data:image/[a-z0-9.+-]+;base64,.+");

  static final Set<String> FIELDS = fields(
      "model",
      "messages",
      "stream",
      "stream_options",
      "n",
      "user",
      "memory",
      "logprobs",
      "top_logprobs",
      "response_format",
      "logit_bias",
      "tools",
      "tool_choice",
      "parallel_tool_calls");

  public static ChatRequest parse(JsonBody body) {
    // Left out, DEFAULT_MODEL as in force for the caller's organization applies (Gateway).
    String model = body.optionalString("model", MAX_MODEL_ID).orElse(null);
    List<ChatMessage> messages = messages(body.get("messages"));
    boolean stream = body.optionalBoolean("stream").orElse(false);
    boolean includeUsage = streamOptions(body, stream);
    String user = body.optionalString("user", MAX_USER).orElse(null);
    return new ChatRequest(
        model,
        messages,
        Sampling.parse(body),
        stream,
        includeUsage,
        user,
        MemoryOptions.parse(body.get("memory")),
        merged(ToolFields.parse(body), ChoiceFields.parse(body)),
        passedOn(body, FIELDS));
  }

  /** The body's fields outside {@code acted} (the ones Engram acts on), as sent; null: none. */
  static ObjectNode passedOn(JsonBody body, Set<String> acted) {
    ObjectNode passed = null;
    for (var field : body.node().properties()) {
      if (!acted.contains(field.getKey())) {
        if (passed == null) {
          passed = Json.MAPPER.createObjectNode();
        }
        passed.set(field.getKey(), field.getValue());
      }
    }
    return passed;
  }

  /**
   * What only an engine that carries them to its model takes (tools and structured output, several
   * choices, log probabilities, logit bias), as one object sent on with the request; null: none.
   */
  private static ObjectNode merged(ObjectNode tools, ObjectNode choices) {
    if (tools == null || choices == null) {
      return tools == null ? choices : tools;
    }
    return tools.setAll(choices);
  }

  static Set<String> fields(String... own) {
    Set<String> all = new HashSet<>(Set.of(own));
    all.addAll(Sampling.FIELDS);
    return Set.copyOf(all);
  }

  static void refuseUnsupported(JsonBody body, Map<String, String> unsupported) {
    for (var entry : unsupported.entrySet()) {
      if (body.has(entry.getKey())) {
        throw ApiException.invalid(
            "unsupported_parameter",
            entry.getKey(),
            "'" + entry.getKey() + "' is not supported: " + entry.getValue());
      }
    }
  }

  /** Default values clients send for parameters this gateway does not carry out. */
  static final Predicate<JsonNode> ONE = n -> n.isIntegralNumber() && n.asLong() == 1;

  static final Predicate<JsonNode> FALSE = n -> n.isBoolean() && !n.asBoolean();
  static final Predicate<JsonNode> EMPTY_OBJECT = n -> n.isObject() && n.isEmpty();

  /** Refuses the field (400 unsupported_parameter) when it is present at any other value. */
  static void onlyAt(JsonBody body, String field, Predicate<JsonNode> accepted, String message) {
    JsonNode value = body.get(field);
    if (value != null && !accepted.test(value)) {
      throw unsupported(field, message);
    }
  }

  static ApiException unsupported(String param, String message) {
    return ApiException.invalid("unsupported_parameter", param, message);
  }

  /** {@code stream_options}: only with a stream, only {@code include_usage}. */
  static boolean streamOptions(JsonBody body, boolean stream) {
    JsonNode options = body.get("stream_options");
    if (options == null) {
      return false;
    }
    if (!stream) {
      throw ApiException.badRequest(
          "stream_options", "'stream_options' is only allowed when 'stream' is true");
    }
    if (!options.isObject()) {
      throw ApiException.badRequest("stream_options", "'stream_options' must be an object");
    }
    for (var names = options.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!name.equals("include_usage")) {
        throw ApiException.badRequest(
            "stream_options",
            "Unknown stream option '" + name + "'; the only option is include_usage");
      }
    }
    JsonNode include = options.get("include_usage");
    if (include != null && !include.isNull() && !include.isBoolean()) {
      throw ApiException.badRequest(
          "stream_options", "'stream_options.include_usage' must be true or false");
    }
    return include != null && include.asBoolean(false);
  }

  private static List<ChatMessage> messages(JsonNode value) {
    if (value == null) {
      throw ApiException.badRequest("messages", "'messages' is required");
    }
    if (!value.isArray() || value.isEmpty()) {
      throw ApiException.badRequest("messages", "'messages' must be a non-empty array of messages");
    }
    if (value.size() > MAX_MESSAGES) {
      throw ApiException.badRequest(
          "messages", "'messages' may hold at most " + MAX_MESSAGES + " messages");
    }
    List<ChatMessage> messages = new ArrayList<>(value.size());
    for (int i = 0; i < value.size(); i++) {
      messages.add(message(value.get(i), "messages[" + i + "]"));
    }
    return List.copyOf(messages);
  }

  private static ChatMessage message(JsonNode node, String where) {
    if (!node.isObject()) {
      throw ApiException.badRequest(where, where + " must be an object with 'role' and 'content'");
    }
    for (var names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!Set.of("role", "content", "name", "tool_calls", "tool_call_id").contains(name)
          && !ECHOED.contains(name)) {
        throw unsupported(
            where + "." + name,
            "Unsupported message field '" + name + "' in " + where
                + "; messages take role, content, name, tool_calls and tool_call_id");
      }
    }
    String role = node.path("role").asText("");
    String normalized = switch (role) {
      case "system", "developer" -> ChatMessage.SYSTEM;
      case "user" -> ChatMessage.USER;
      case "assistant" -> ChatMessage.ASSISTANT;
      case "tool" -> ChatMessage.TOOL;
      case "function" ->
        throw unsupported(
            where + ".role",
            "Messages with role 'function' are the deprecated function calling: use 'tool'");
      default ->
        throw ApiException.badRequest(
            where + ".role",
            where + ".role must be system, user, assistant or tool"
                + (role.isEmpty() ? "" : ", got '" + role + "'"));
    };
    JsonNode name = node.get("name");
    if (name != null && !name.isNull() && (!name.isTextual() || name.asText().length() > 64)) {
      throw ApiException.badRequest(
          where + ".name", where + ".name must be a string of at most 64 characters");
    }
    ObjectNode tooling = ToolFields.message(node, normalized, where);
    JsonNode content = node.get("content");
    boolean callsOnly =
        tooling != null && tooling.has("tool_calls") && (content == null || content.isNull());
    String text = callsOnly ? null : content(content, where + ".content");
    if (!callsOnly && hasImages(content)) {
      // The parts go to the model as sent; the text stands for the message everywhere else
      // (memory's query, token counts, history).
      tooling = tooling == null ? Json.MAPPER.createObjectNode() : tooling;
      tooling.set(PARTS, content);
    }
    return new ChatMessage(normalized, text, tooling);
  }

  /** Where a message's content parts are kept when some are images (see {@link #content}). */
  public static final String PARTS = io.engram.inference.engine.Engine.PARTS;

  private static boolean hasImages(JsonNode content) {
    if (content == null || !content.isArray()) {
      return false;
    }
    for (JsonNode part : content) {
      if ("image_url".equals(part.path("type").asText())) {
        return true;
      }
    }
    return false;
  }

  /**
   * A string, or OpenAI's list of content parts: text parts (their text is the message's), and
   * {@code image_url} parts ({@code url} an https or data URL, {@code detail} optional), which only
   * a model that takes images receives (the gateway asks its engine).
   */
  private static String content(JsonNode content, String where) {
    if (content == null || content.isNull()) {
      throw ApiException.badRequest(where, where + " is required");
    }
    if (content.isTextual()) {
      return content.asText();
    }
    if (content.isArray() && !content.isEmpty()) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < content.size(); i++) {
        JsonNode part = content.get(i);
        String type = part.path("type").asText();
        if (type.equals("text") && part.path("text").isTextual()) {
          text.append(part.get("text").asText());
        } else if (type.equals("image_url")) {
          String url = part.path("image_url").path("url").asText("");
          if (!url.startsWith("https://")
              && !url.startsWith("http://")
              && !DATA_IMAGE.matcher(url).matches()) {
            throw ApiException.badRequest(
                where + "[" + i + "].image_url.url",
                "An image part's url is an http(s) URL or a data:image/...;base64, URL");
          }
        } else {
          throw unsupported(
              where + "[" + i + "]",
              where + "[" + i + "]: content parts are text and image_url ('" + type
                  + "' is not carried)");
        }
      }
      return text.toString();
    }
    throw ApiException.badRequest(where, where + " must be a string or a list of content parts");
  }
}
