package io.engram.support;

import com.anthropic.core.ObjectMappers;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.MessageTokensCount;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Anthropic's Messages API as its reference publishes it: {@code POST /v1/messages} with {@code
 * x-api-key} and {@code anthropic-version}, {@code model}, {@code max_tokens} and {@code
 * messages} required, turns alternating from a user turn, content a string or typed blocks
 * ({@code text}, {@code tool_use}, {@code tool_result}), {@code temperature} from 0 to 1, no field
 * the API does not define; answers a message (text, or a {@code tool_use} block when tools are
 * offered and the last turn is the user's words), whole or as the API's named events; errors in
 * its {@code {type: error, error: {type, message}}} shape. {@code GET /v1/models} lists one model.
 * Each request is also read into the official Java SDK's {@code MessageCreateParams} and
 * validated, and each answer and event the fake sends is first held to the SDK's {@code Message}
 * and {@code RawMessageStreamEvent}.
 */
public final class FakeAnthropic extends FakeProvider {
  public static final List<String> PIECES = List.of("Hello", " from", " Claude", ".");
  private static final Set<String> FIELDS = Set.of(
      "model",
      "messages",
      "max_tokens",
      "system",
      "temperature",
      "top_p",
      "top_k",
      "stop_sequences",
      "stream",
      "tools",
      "tool_choice",
      "metadata",
      "thinking",
      "service_tier");

  public FakeAnthropic(String key) {
    super(key);
  }

  @Override
  public String baseUrl() {
    return origin() + "/v1";
  }

  @Override
  protected void handle(HttpExchange exchange) throws IOException {
    if (!keyIs(exchange.getRequestHeaders().getFirst("x-api-key"))) {
      error(exchange, 401, "authentication_error", "invalid x-api-key");
      return;
    }
    String path = exchange.getRequestURI().getPath();
    if (exchange.getRequestMethod().equals("GET") && path.equals("/v1/models")) {
      send(
          exchange,
          200,
          "{\"data\":[{\"id\":\"claude-test\",\"type\":\"model\","
              + "\"display_name\":\"Claude Test\",\"created_at\":\"2025-01-01T00:00:00Z\"}],"
              + "\"has_more\":false,\"first_id\":\"claude-test\",\"last_id\":\"claude-test\"}");
      return;
    }
    if (exchange.getRequestMethod().equals("POST") && path.equals("/v1/messages/count_tokens")) {
      countTokens(exchange);
      return;
    }
    if (!exchange.getRequestMethod().equals("POST") || !path.equals("/v1/messages")) {
      error(exchange, 404, "not_found_error", "no route " + path);
      return;
    }
    JsonNode body = received(exchange);
    String wrong = check(exchange, body);
    if (wrong == null) {
      wrong = typed(body, MessageCreateParams.Body.class);
    }
    if (wrong != null) {
      refused(wrong);
      error(exchange, 400, "invalid_request_error", wrong);
      return;
    }
    if (failing() != 0) {
      String type = switch (failing()) {
        case 429 -> "rate_limit_error";
        case 529 -> "overloaded_error";
        default -> "api_error";
      };
      error(exchange, failing(), type, "the fake was told to fail");
      return;
    }
    List<ObjectNode> blocks = answer(body);
    if (body.path("stream").asBoolean(false)) {
      stream(exchange, body, blocks);
    } else {
      ObjectNode message = message(body, blocks);
      message.put("stop_reason", stopReason(blocks));
      message.putObject("usage").put("input_tokens", inputTokens(body)).put("output_tokens", 4);
      send(exchange, 200, answered(message, Message.class));
    }
  }

  /**
   * {@code POST /v1/messages/count_tokens}: the message's input without what only generation takes
   * (no {@code max_tokens}, sampling or {@code stream}), held to the SDK's {@code
   * MessageCountTokensParams}; answers {@link #countOf} the body, a count the gateway's tokenizer
   * never gives.
   */
  private void countTokens(HttpExchange exchange) throws IOException {
    JsonNode body = received(exchange);
    String wrong = null;
    for (var names = body.fieldNames(); names.hasNext() && wrong == null; ) {
      String name = names.next();
      if (!Set.of("model", "messages", "system", "tools", "tool_choice", "thinking")
          .contains(name)) {
        wrong = name + ": Extra inputs are not permitted";
      }
    }
    if (wrong == null) {
      wrong = typed(body, MessageCountTokensParams.Body.class);
    }
    if (wrong != null) {
      refused(wrong);
      error(exchange, 400, "invalid_request_error", wrong);
      return;
    }
    ObjectNode count = Json.MAPPER.createObjectNode().put("input_tokens", countOf(body));
    send(exchange, 200, answered(count, MessageTokensCount.class));
  }

  /** What this fake counts a count_tokens body as: 1,000 and a token a character of its input. */
  public static int countOf(JsonNode body) {
    return 1_000
        + body.path("messages").toString().length()
        + body.path("tools").toString().length();
  }

  /** Why the request does not follow the API, or null. */
  private static String check(HttpExchange exchange, JsonNode body) {
    if (exchange.getRequestHeaders().getFirst("anthropic-version") == null) {
      return "anthropic-version header is required";
    }
    for (var names = body.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        return name + ": Extra inputs are not permitted";
      }
    }
    if (!body.path("model").isTextual()) {
      return "model: Field required";
    }
    if (!body.path("max_tokens").isIntegralNumber() || body.path("max_tokens").asInt() < 1) {
      return "max_tokens: Field required";
    }
    if (body.has("temperature")
        && (body.get("temperature").asDouble() < 0 || body.get("temperature").asDouble() > 1)) {
      return "temperature: Input should be less than or equal to 1";
    }
    JsonNode messages = body.path("messages");
    if (!messages.isArray() || messages.isEmpty()) {
      return "messages: Field required";
    }
    String expected = "user";
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      if (!m.path("role").asText().equals(expected)) {
        return "messages." + i + ".role: roles must alternate between user and assistant, starting"
            + " with user";
      }
      expected = expected.equals("user") ? "assistant" : "user";
      JsonNode content = m.get("content");
      if (content == null || !(content.isTextual() || content.isArray())) {
        return "messages." + i + ".content: Input should be a valid string or list";
      }
      for (JsonNode block : content.isArray() ? content : Json.MAPPER.createArrayNode()) {
        String type = block.path("type").asText();
        boolean valid = switch (type) {
          case "text" -> block.path("text").isTextual();
          case "tool_use" ->
            block.path("id").isTextual()
                && block.path("name").isTextual()
                && block.path("input").isObject()
                && m.path("role").asText().equals("assistant");
          case "tool_result" ->
            block.path("tool_use_id").isTextual() && m.path("role").asText().equals("user");
          case "image" ->
            switch (block.path("source").path("type").asText()) {
              case "base64" ->
                block.path("source").path("media_type").asText().startsWith("image/")
                    && block.path("source").path("data").isTextual();
              case "url" -> block.path("source").path("url").asText().startsWith("http");
              default -> false;
            };
          default -> false;
        };
        if (!valid) {
          return "messages." + i + ".content: invalid " + type + " block";
        }
      }
    }
    if (body.has("system")
        && !body.get("system").isTextual()
        && !body.get("system").isArray()) {
      return "system: Input should be a valid string or list";
    }
    for (JsonNode tool : body.path("tools")) {
      if (!tool.path("name").isTextual() || !tool.path("input_schema").isObject()) {
        return "tools: each tool needs name and input_schema";
      }
    }
    JsonNode choice = body.get("tool_choice");
    if (choice != null
        && !Set.of("auto", "any", "tool", "none").contains(choice.path("type").asText())) {
      return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
    }
    return null;
  }

  /** A tool call when tools are offered and the user spoke last, else text. */
  private static List<ObjectNode> answer(JsonNode body) {
    JsonNode messages = body.path("messages");
    JsonNode last = messages.get(messages.size() - 1).path("content");
    boolean userSpoke = last.isTextual()
        || last.isArray()
            && last.size() > 0
            && last.get(0).path("type").asText().equals("text");
    boolean toolsOff = body.path("tool_choice").path("type").asText().equals("none");
    List<ObjectNode> blocks = new ArrayList<>();
    if (body.path("tools").size() > 0 && userSpoke && !toolsOff) {
      ObjectNode call = Json.MAPPER
          .createObjectNode()
          .put("type", "tool_use")
          .put("id", "toolu_01")
          .put("name", body.path("tools").get(0).path("name").asText());
      call.putObject("input").put("city", "Lyon");
      blocks.add(call);
    } else {
      blocks.add(
          Json.MAPPER.createObjectNode().put("type", "text").put("text", String.join("", PIECES)));
    }
    return blocks;
  }

  private static String stopReason(List<ObjectNode> blocks) {
    return blocks.getFirst().path("type").asText().equals("tool_use") ? "tool_use" : "end_turn";
  }

  private static int inputTokens(JsonNode body) {
    return body.path("messages").toString().split("\\s+").length;
  }

  private static ObjectNode message(JsonNode body, List<ObjectNode> blocks) {
    ObjectNode message = Json.MAPPER
        .createObjectNode()
        .put("id", "msg_01")
        .put("type", "message")
        .put("role", "assistant")
        .put("model", body.path("model").asText());
    ArrayNode content = message.putArray("content");
    blocks.forEach(content::add);
    message.putNull("stop_sequence");
    return message;
  }

  private void stream(HttpExchange exchange, JsonNode body, List<ObjectNode> blocks)
      throws IOException {
    List<String> events = new ArrayList<>();
    ObjectNode start = message(body, List.of());
    start.putNull("stop_reason");
    start.putObject("usage").put("input_tokens", inputTokens(body)).put("output_tokens", 1);
    events.add(event("message_start", Json.MAPPER.createObjectNode().set("message", start)));
    events.add(event("ping", Json.MAPPER.createObjectNode()));
    ObjectNode block = blocks.getFirst();
    boolean tool = block.path("type").asText().equals("tool_use");
    ObjectNode opened = block.deepCopy();
    if (tool) {
      opened.putObject("input");
    } else {
      opened.put("text", "");
    }
    events.add(event(
        "content_block_start",
        Json.MAPPER.createObjectNode().put("index", 0).set("content_block", opened)));
    List<ObjectNode> deltas = new ArrayList<>();
    if (tool) {
      for (String piece : List.of("{\"city\":", " \"Lyon\"}")) {
        deltas.add(Json.MAPPER
            .createObjectNode()
            .put("type", "input_json_delta")
            .put("partial_json", piece));
      }
    } else {
      for (String piece : PIECES) {
        deltas.add(Json.MAPPER.createObjectNode().put("type", "text_delta").put("text", piece));
      }
    }
    for (ObjectNode delta : deltas) {
      events.add(event(
          "content_block_delta",
          Json.MAPPER.createObjectNode().put("index", 0).set("delta", delta)));
    }
    events.add(event("content_block_stop", Json.MAPPER.createObjectNode().put("index", 0)));
    ObjectNode end = Json.MAPPER.createObjectNode();
    end.putObject("delta").put("stop_reason", stopReason(blocks)).putNull("stop_sequence");
    end.putObject("usage").put("output_tokens", deltas.size());
    events.add(event("message_delta", end));
    events.add(event("message_stop", Json.MAPPER.createObjectNode()));
    OutputStream out = openStream(exchange);
    for (int i = 0; i < events.size(); i++) {
      if (cutting() >= 0 && i >= cutting()) {
        return; // the connection ends without message_stop
      }
      write(out, events.get(i));
    }
  }

  private static String event(String name, ObjectNode data) {
    data.put("type", name);
    String json =
        name.equals("ping") ? Json.write(data) : answered(data, RawMessageStreamEvent.class);
    return "event: " + name + "\ndata: " + json + "\n\n";
  }

  /**
   * Why a request is not one of the official SDK's types (read and validated as the SDK reads
   * it), or null: the reference's shapes as Anthropic's own SDK encodes them.
   */
  private static String typed(JsonNode body, Class<?> type) {
    try {
      Object read = ObjectMappers.jsonMapper().readValue(Json.write(body), type);
      type.getMethod("validate").invoke(read);
      return null;
    } catch (ReflectiveOperationException | java.io.IOException | RuntimeException e) {
      Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
      return "not Anthropic's " + type.getSimpleName() + ": " + cause.getMessage();
    }
  }

  /** An answer of the fake's, held to the SDK's type of it first (a fake's own slip fails here). */
  private static String answered(ObjectNode answer, Class<?> type) {
    String wrong = typed(answer, type);
    if (wrong != null) {
      throw new IllegalStateException("the fake's answer is " + wrong + ": " + answer);
    }
    return Json.write(answer);
  }

  private static void error(HttpExchange exchange, int status, String type, String message)
      throws IOException {
    ObjectNode body = Json.MAPPER.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    send(exchange, status, Json.write(body));
  }
}
