package io.engram.inference.remote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.httpclient.OriginClient;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;

/**
 * Anthropic's Messages API ({@code POST /v1/messages}), spoken for OpenAI's chat: the system
 * messages become {@code system}, the conversation alternating user and assistant turns (tool
 * results are a user turn's {@code tool_result} blocks, tool calls an assistant turn's {@code
 * tool_use} blocks), the tools {@code tools} with their {@code input_schema}, and back: text and
 * tool calls whole or as OpenAI's deltas, stop reasons in OpenAI's words, usage. A parameter
 * Anthropic has no equal for is not carried ({@link #carries}): the gateway refuses it by name,
 * or drops it when the organization chose so.
 */
public final class AnthropicEngine extends ProviderEngine {
  /** The API version this adapter follows (Anthropic's {@code anthropic-version} header). */
  public static final String VERSION = "2023-06-01";

  private final String[] streamHeaders;
  private final String[] wholeHeaders;

  public AnthropicEngine(
      Endpoint endpoint, String upstreamModel, Duration timeout, OriginClient shared) {
    super(endpoint, upstreamModel, timeout, shared);
    this.streamHeaders = apiHeaders("text/event-stream");
    this.wholeHeaders = apiHeaders("application/json");
  }

  private String[] apiHeaders(String accept) {
    List<String> own = new ArrayList<>(List.of(
        "Content-Type", "application/json", "Accept", accept, "anthropic-version", VERSION));
    if (endpoint.apiKey() != null) {
      own.addAll(List.of("x-api-key", endpoint.apiKey()));
    }
    return headers(own.toArray(String[]::new));
  }

  @Override
  public boolean carries(String field, JsonNode value) {
    return switch (field) {
      case "tools",
          "tool_choice",
          "parallel_tool_calls",
          "top_p",
          "stop",
          "max_tokens",
          "max_completion_tokens" -> true;
      case "temperature" -> value.isNumber() && value.asDouble() <= 1; // Anthropic's range: 0-1
      case "store" -> value.isBoolean() && !value.asBoolean();
      case IMAGES -> true; // base64 and URL image sources
      default -> false;
    };
  }

  /**
   * Anthropic's own count ({@code POST /v1/messages/count_tokens}): the message as it would be
   * sent, without what only generation takes (the reply's limit, sampling, streaming).
   */
  @Override
  public OptionalInt countTokens(GenerationRequest request) {
    ObjectNode sent = body(request);
    ObjectNode counted = Json.MAPPER.createObjectNode();
    for (String field : List.of("model", "system", "messages", "tools", "tool_choice")) {
      if (sent.has(field)) {
        counted.set(field, sent.get(field));
      }
    }
    JsonNode answer = postJson(
        baseUrl.getRawPath() + "messages/count_tokens", wholeHeaders, counted, timeoutOf(request));
    JsonNode tokens = answer.path("input_tokens");
    if (!tokens.canConvertToInt() || tokens.asInt() < 0) {
      throw malformed("the token count has no input_tokens");
    }
    return OptionalInt.of(tokens.asInt());
  }

  /** The provider's model names ({@code GET /v1/models}). */
  @Override
  public List<String> listModels() {
    List<String> names = new ArrayList<>();
    getJson(baseUrl.getRawPath() + "models", wholeHeaders)
        .path("data")
        .forEach(m -> names.add(m.path("id").asText()));
    return names;
  }

  @Override
  String providerName() {
    return "anthropic";
  }

  @Override
  String target(GenerationRequest request) {
    return baseUrl.getRawPath() + "messages";
  }

  @Override
  String[] headers(GenerationRequest request) {
    return request.stream() ? streamHeaders : wholeHeaders;
  }

  @Override
  ObjectNode body(GenerationRequest request) {
    ObjectNode body = Json.MAPPER.createObjectNode().put("model", modelOf(request));
    Sampling sampling = request.sampling();
    body.put("max_tokens", sampling.maxTokens()); // required by Anthropic
    StringBuilder system = new StringBuilder();
    ArrayNode messages = body.putArray("messages");
    List<ChatMessage> conversation = request.isChat()
        ? request.messages()
        : List.of(new ChatMessage(ChatMessage.USER, request.prompt()));
    for (ChatMessage m : conversation) {
      if (m.role().equals(ChatMessage.SYSTEM)) {
        system.append(system.isEmpty() ? "" : "\n\n").append(m.content());
        continue;
      }
      String role = m.role().equals(ChatMessage.ASSISTANT) ? "assistant" : "user";
      ArrayNode blocks = turn(messages, role);
      if (m.role().equals(ChatMessage.TOOL)) {
        blocks
            .addObject()
            .put("type", "tool_result")
            .put("tool_use_id", m.tooling().path("tool_call_id").asText())
            .put("content", m.content() == null ? "" : m.content());
        continue;
      }
      JsonNode parts = m.tooling() == null ? null : m.tooling().get(PARTS);
      if (parts != null) {
        parts.forEach(part -> blocks.add(block(part)));
      } else if (m.content() != null && !m.content().isEmpty()) {
        blocks.addObject().put("type", "text").put("text", m.content());
      }
      JsonNode calls = m.tooling() == null ? null : m.tooling().get("tool_calls");
      if (calls != null) {
        for (JsonNode call : calls) {
          blocks
              .addObject()
              .put("type", "tool_use")
              .put("id", call.path("id").asText())
              .put("name", call.path("function").path("name").asText())
              .set("input", object(call.path("function").path("arguments").asText("{}")));
        }
      }
    }
    if (!system.isEmpty()) {
      body.put("system", system.toString());
    }
    JsonNode sent = sampling.asSent();
    copyIfCarried(sent, "temperature", body, "temperature");
    copyIfCarried(sent, "top_p", body, "top_p");
    if (!sampling.stop().isEmpty()) {
      ArrayNode stops = body.putArray("stop_sequences");
      sampling.stop().forEach(stops::add);
    }
    if (request.user() != null) {
      body.putObject("metadata").put("user_id", request.user());
    }
    tools(request.tooling(), body);
    if (request.stream()) {
      body.put("stream", true);
    }
    return body;
  }

  /** An OpenAI content part as Anthropic's block: text, or an image from base64 data or a URL. */
  private static ObjectNode block(JsonNode part) {
    if (!"image_url".equals(part.path("type").asText())) {
      return Json.MAPPER
          .createObjectNode()
          .put("type", "text")
          .put("text", part.path("text").asText());
    }
    String url = part.path("image_url").path("url").asText();
    String[] data = Engine.dataUrl(url);
    ObjectNode image = Json.MAPPER.createObjectNode().put("type", "image");
    ObjectNode source = image.putObject("source");
    if (data != null) {
      source.put("type", "base64").put("media_type", data[0]).put("data", data[1]);
    } else {
      source.put("type", "url").put("url", url);
    }
    return image;
  }

  /** The last turn when it has this role (Anthropic's turns alternate), else a new one. */
  private static ArrayNode turn(ArrayNode messages, String role) {
    JsonNode last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
    if (last != null && last.path("role").asText().equals(role)) {
      return (ArrayNode) last.get("content");
    }
    ObjectNode turn = messages.addObject().put("role", role);
    return turn.putArray("content");
  }

  private void copyIfCarried(JsonNode sent, String field, ObjectNode body, String as) {
    JsonNode value = sent.get(field);
    if (value != null && carries(field, value)) {
      body.set(as, value);
    }
  }

  /** OpenAI's tools and tool choice in Anthropic's form. */
  private static void tools(ObjectNode tooling, ObjectNode body) {
    if (tooling == null || !tooling.has("tools")) {
      return;
    }
    ArrayNode tools = body.putArray("tools");
    for (JsonNode tool : tooling.get("tools")) {
      JsonNode function = tool.path("function");
      ObjectNode converted = tools.addObject().put("name", function.path("name").asText());
      if (function.hasNonNull("description")) {
        converted.put("description", function.get("description").asText());
      }
      JsonNode schema = function.get("parameters");
      converted.set(
          "input_schema",
          schema != null && schema.isObject()
              ? schema
              : Json.MAPPER.createObjectNode().put("type", "object"));
    }
    ObjectNode choice = Json.MAPPER.createObjectNode();
    JsonNode asked = tooling.get("tool_choice");
    if (asked != null && asked.isTextual()) {
      choice.put(
          "type",
          switch (asked.asText()) {
            case "required" -> "any";
            case "none" -> "none";
            default -> "auto";
          });
    } else if (asked != null && asked.isObject()) {
      choice.put("type", "tool").put("name", asked.path("function").path("name").asText());
    }
    JsonNode parallel = tooling.get("parallel_tool_calls");
    if (parallel != null && parallel.isBoolean() && !parallel.asBoolean()) {
      if (!choice.has("type")) {
        choice.put("type", "auto");
      }
      choice.put("disable_parallel_tool_use", true);
    }
    if (!choice.isEmpty()) {
      body.set("tool_choice", choice);
    }
  }

  @Override
  Generation whole(GenerationRequest request, JsonNode json, TokenSink sink) {
    if (!json.path("content").isArray()) {
      throw malformed("the message has no content array");
    }
    StringBuilder text = new StringBuilder();
    ArrayNode calls = Json.MAPPER.createArrayNode();
    for (JsonNode block : json.get("content")) {
      switch (block.path("type").asText()) {
        case "text" -> text.append(block.path("text").asText());
        case "tool_use" ->
          calls.add(call(
              block.path("id").asText(),
              block.path("name").asText(),
              Json.write(block.path("input"))));
        default -> {} // thinking and other blocks are not part of OpenAI's answer
      }
    }
    if (!text.isEmpty()) {
      sink.text(text.toString());
    }
    return new Generation(
        text.toString(),
        finishReason(json.path("stop_reason").asText(null)),
        usage(json.path("usage"), null),
        calls.isEmpty() ? null : calls);
  }

  private static ObjectNode call(String id, String name, String arguments) {
    ObjectNode call = Json.MAPPER.createObjectNode().put("id", id).put("type", "function");
    call.putObject("function").put("name", name).put("arguments", arguments);
    return call;
  }

  /**
   * Anthropic's events in order: message_start (input usage), content_block_start/delta/stop
   * (text, or a tool call's name then its input's JSON in pieces), message_delta (stop reason,
   * output usage), message_stop; an error event is the provider's failure.
   */
  @Override
  Generation relay(GenerationRequest request, Events events, TokenSink sink) throws IOException {
    StringBuilder text = new StringBuilder();
    String stopReason = null;
    JsonNode startUsage = null;
    JsonNode endUsage = null;
    boolean stopped = false;
    int calls = 0;
    int[] callIndex = new int[256];
    String data;
    while ((data = events.nextData()) != null) {
      JsonNode event = parse(data);
      switch (event.path("type").asText()) {
        case "message_start" -> startUsage = event.path("message").path("usage");
        case "content_block_start" -> {
          JsonNode block = event.path("content_block");
          if (block.path("type").asText().equals("tool_use")) {
            int index = event.path("index").asInt();
            if (index >= 0 && index < callIndex.length) {
              callIndex[index] = calls;
            }
            ObjectNode delta =
                call(block.path("id").asText(), block.path("name").asText(), "");
            delta.put("index", calls++);
            sink.toolCalls(Json.MAPPER.createArrayNode().add(delta));
          }
        }
        case "content_block_delta" -> {
          JsonNode delta = event.path("delta");
          if (delta.path("type").asText().equals("text_delta")) {
            String piece = delta.path("text").asText("");
            if (!piece.isEmpty()) {
              text.append(piece);
              sink.text(piece);
            }
          } else if (delta.path("type").asText().equals("input_json_delta")) {
            int index = event.path("index").asInt();
            ObjectNode piece = Json.MAPPER
                .createObjectNode()
                .put("index", index >= 0 && index < callIndex.length ? callIndex[index] : 0);
            piece
                .putObject("function")
                .put("arguments", delta.path("partial_json").asText(""));
            sink.toolCalls(Json.MAPPER.createArrayNode().add(piece));
          }
        }
        case "message_delta" -> {
          stopReason = event.path("delta").path("stop_reason").asText(stopReason);
          endUsage = event.path("usage");
        }
        case "message_stop" -> stopped = true;
        case "error" ->
          throw new EngineException(
              EngineException.Failure.UPSTREAM_ERROR,
              "The upstream failed during the stream: " + UpstreamErrors.message(event));
        default -> {} // ping, content_block_stop
      }
      if (stopped) {
        break;
      }
    }
    if (!stopped) {
      throw cut();
    }
    return new Generation(
        text.toString(), finishReason(stopReason), usage(startUsage, endUsage), null);
  }

  /** Anthropic's stop reasons in OpenAI's words. */
  static String finishReason(String stopReason) {
    if (stopReason == null) {
      return Generation.STOP;
    }
    return switch (stopReason) {
      case "max_tokens" -> Generation.LENGTH;
      case "tool_use" -> "tool_calls";
      case "refusal" -> "content_filter";
      default -> Generation.STOP; // end_turn, stop_sequence, pause_turn
    };
  }

  /** Input tokens (with what the cache read and wrote) and output tokens. */
  private static Generation.Usage usage(JsonNode start, JsonNode end) {
    if (start == null || !start.path("input_tokens").isIntegralNumber()) {
      return null;
    }
    int input = start.path("input_tokens").asInt()
        + start.path("cache_creation_input_tokens").asInt(0)
        + start.path("cache_read_input_tokens").asInt(0);
    JsonNode output = end != null && end.has("output_tokens")
        ? end.get("output_tokens")
        : start.path("output_tokens");
    return new Generation.Usage(input, output.asInt(0));
  }
}
