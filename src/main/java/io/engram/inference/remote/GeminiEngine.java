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
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Google's Gemini API ({@code models/{model}:generateContent}, and {@code :streamGenerateContent}
 * with {@code alt=sse}), spoken for OpenAI's chat: system messages become {@code
 * systemInstruction}, the conversation {@code contents} of user and model turns (a tool's answer
 * is a {@code functionResponse} part naming the function it answers, a tool call a {@code
 * functionCall} part), the sampling {@code generationConfig}, JSON output {@code
 * responseMimeType} with the schema as {@code responseJsonSchema}, the tools {@code
 * functionDeclarations}; and back: text and calls, finish reasons in OpenAI's words, usage.
 */
public final class GeminiEngine extends ProviderEngine {
  private static final int MAX_STOP_SEQUENCES = 5;

  private final String[] apiHeaders;

  public GeminiEngine(
      Endpoint endpoint, String upstreamModel, Duration timeout, OriginClient shared) {
    super(endpoint, upstreamModel, timeout, shared);
    List<String> own = new ArrayList<>(List.of("Content-Type", "application/json"));
    if (endpoint.apiKey() != null) {
      own.addAll(List.of("x-goog-api-key", endpoint.apiKey()));
    }
    this.apiHeaders = headers(own.toArray(String[]::new));
  }

  @Override
  public boolean carries(String field, JsonNode value) {
    return switch (field) {
      case "tools",
          "tool_choice",
          "response_format",
          "temperature",
          "top_p",
          "seed",
          "frequency_penalty",
          "presence_penalty",
          "max_tokens",
          "max_completion_tokens" -> true;
      case "stop" -> !value.isArray() || value.size() <= MAX_STOP_SEQUENCES;
      case "parallel_tool_calls" -> value.isBoolean() && value.asBoolean(); // Gemini's own way
      case "store" -> value.isBoolean() && !value.asBoolean();
      case IMAGES -> inlineOnly(value); // Gemini reads images sent inline, not from any URL
      default -> false;
    };
  }

  /** The provider's model names ({@code GET models}), without their {@code models/} prefix. */
  @Override
  public List<String> listModels() {
    List<String> names = new ArrayList<>();
    getJson(baseUrl.getRawPath() + "models", apiHeaders)
        .path("models")
        .forEach(m -> names.add(m.path("name").asText().replaceFirst("^models/", "")));
    return names;
  }

  /** Gemini's {@code models/{model}:batchEmbedContents}; it counts no tokens. */
  @Override
  public Vectors embed(
      List<String> texts, Integer dimensions, String user, Duration wait, String orgId) {
    String model = URLEncoder.encode(upstreamModel, StandardCharsets.UTF_8);
    ObjectNode body = Json.MAPPER.createObjectNode();
    ArrayNode requests = body.putArray("requests");
    for (String text : texts) {
      ObjectNode request = requests.addObject().put("model", "models/" + upstreamModel);
      request.putObject("content").putArray("parts").addObject().put("text", text);
      if (dimensions != null) {
        request.put("outputDimensionality", dimensions);
      }
    }
    JsonNode answer = embeddings(
        upstreamModel,
        baseUrl.getRawPath() + "models/" + model + ":batchEmbedContents",
        apiHeaders,
        body,
        wait);
    List<float[]> vectors = new ArrayList<>();
    for (JsonNode embedding : answer.path("embeddings")) {
      float[] vector = vector(embedding.path("values"));
      if (vector == null) {
        throw malformed("an embedding without its values");
      }
      vectors.add(vector);
    }
    if (vectors.size() != texts.size()) {
      throw malformed("not one embedding per input");
    }
    return new Vectors(vectors, -1);
  }

  @Override
  String providerName() {
    return "gcp.gemini";
  }

  /**
   * Gemini's own count ({@code models/{model}:countTokens}) of the request as it would be sent:
   * its contents with the system instruction and tools, as a whole generate request.
   */
  @Override
  public OptionalInt countTokens(GenerationRequest request) {
    ObjectNode sent = body(request);
    ObjectNode asked = Json.MAPPER.createObjectNode();
    ObjectNode whole =
        asked.putObject("generateContentRequest").put("model", "models/" + modelOf(request));
    for (String field : List.of("contents", "systemInstruction", "tools", "toolConfig")) {
      if (sent.has(field)) {
        whole.set(field, sent.get(field));
      }
    }
    String model = URLEncoder.encode(modelOf(request), StandardCharsets.UTF_8);
    JsonNode answer = postJson(
        baseUrl.getRawPath() + "models/" + model + ":countTokens",
        apiHeaders,
        asked,
        timeoutOf(request));
    JsonNode tokens = answer.path("totalTokens");
    if (!tokens.canConvertToInt() || tokens.asInt() < 0) {
      throw malformed("the token count has no totalTokens");
    }
    return OptionalInt.of(tokens.asInt());
  }

  @Override
  String target(GenerationRequest request) {
    String model = URLEncoder.encode(modelOf(request), StandardCharsets.UTF_8);
    return baseUrl.getRawPath() + "models/" + model
        + (request.stream() ? ":streamGenerateContent?alt=sse" : ":generateContent");
  }

  @Override
  String[] headers(GenerationRequest request) {
    return apiHeaders;
  }

  @Override
  ObjectNode body(GenerationRequest request) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    StringBuilder system = new StringBuilder();
    ArrayNode contents = body.putArray("contents");
    Map<String, String> functionOfCall = new HashMap<>();
    List<ChatMessage> conversation = request.isChat()
        ? request.messages()
        : List.of(new ChatMessage(ChatMessage.USER, request.prompt()));
    for (ChatMessage m : conversation) {
      if (m.role().equals(ChatMessage.SYSTEM)) {
        system.append(system.isEmpty() ? "" : "\n\n").append(m.content());
        continue;
      }
      ArrayNode parts = turn(contents, m.role().equals(ChatMessage.ASSISTANT) ? "model" : "user");
      if (m.role().equals(ChatMessage.TOOL)) {
        String callId = m.tooling().path("tool_call_id").asText();
        ObjectNode answer = parts.addObject().putObject("functionResponse");
        answer.put("name", functionOfCall.getOrDefault(callId, callId));
        answer.putObject("response").put("content", m.content() == null ? "" : m.content());
        continue;
      }
      JsonNode given = m.tooling() == null ? null : m.tooling().get(PARTS);
      if (given != null) {
        for (JsonNode part : given) {
          String[] data = Engine.dataUrl(part.path("image_url").path("url").asText(""));
          if (data != null) {
            parts.addObject().putObject("inlineData").put("mimeType", data[0]).put("data", data[1]);
          } else if (part.has("text")) {
            parts.addObject().put("text", part.path("text").asText());
          }
        }
      } else if (m.content() != null && !m.content().isEmpty()) {
        parts.addObject().put("text", m.content());
      }
      JsonNode calls = m.tooling() == null ? null : m.tooling().get("tool_calls");
      if (calls != null) {
        for (JsonNode call : calls) {
          String name = call.path("function").path("name").asText();
          functionOfCall.put(call.path("id").asText(), name);
          ObjectNode functionCall = parts.addObject().putObject("functionCall").put("name", name);
          functionCall.set(
              "args", object(call.path("function").path("arguments").asText()));
        }
      }
    }
    if (!system.isEmpty()) {
      body.putObject("systemInstruction")
          .putArray("parts")
          .addObject()
          .put("text", system.toString());
    }
    body.set("generationConfig", generationConfig(request));
    tools(request.tooling(), body);
    return body;
  }

  private static boolean inlineOnly(JsonNode parts) {
    for (JsonNode part : parts) {
      if ("image_url".equals(part.path("type").asText())
          && Engine.dataUrl(part.path("image_url").path("url").asText("")) == null) {
        return false;
      }
    }
    return true;
  }

  private static ArrayNode turn(ArrayNode contents, String role) {
    JsonNode last = contents.isEmpty() ? null : contents.get(contents.size() - 1);
    if (last != null && last.path("role").asText().equals(role)) {
      return (ArrayNode) last.get("parts");
    }
    return contents.addObject().put("role", role).putArray("parts");
  }

  private ObjectNode generationConfig(GenerationRequest request) {
    Sampling sampling = request.sampling();
    JsonNode sent = sampling.asSent();
    ObjectNode config = Json.MAPPER.createObjectNode();
    config.put("maxOutputTokens", sampling.maxTokens());
    String[][] names = {
      {"temperature", "temperature"},
      {"top_p", "topP"},
      {"seed", "seed"},
      {"frequency_penalty", "frequencyPenalty"},
      {"presence_penalty", "presencePenalty"}
    };
    for (String[] name : names) {
      if (sent.has(name[0]) && carries(name[0], sent.get(name[0]))) {
        config.set(name[1], sent.get(name[0]));
      }
    }
    if (!sampling.stop().isEmpty() && sampling.stop().size() <= MAX_STOP_SEQUENCES) {
      ArrayNode stops = config.putArray("stopSequences");
      sampling.stop().forEach(stops::add);
    }
    JsonNode format = request.tooling() == null ? null : request.tooling().get("response_format");
    if (format != null && !format.path("type").asText().equals("text")) {
      config.put("responseMimeType", "application/json");
      JsonNode schema = format.path("json_schema").get("schema");
      if (schema != null && schema.isObject()) {
        config.set("responseJsonSchema", schema);
      }
    }
    return config;
  }

  /** OpenAI's tools and tool choice as Gemini's function declarations and calling mode. */
  private static void tools(ObjectNode tooling, ObjectNode body) {
    if (tooling == null || !tooling.has("tools")) {
      return;
    }
    ArrayNode declarations = body.putArray("tools").addObject().putArray("functionDeclarations");
    for (JsonNode tool : tooling.get("tools")) {
      JsonNode function = tool.path("function");
      ObjectNode declaration =
          declarations.addObject().put("name", function.path("name").asText());
      if (function.hasNonNull("description")) {
        declaration.put("description", function.get("description").asText());
      }
      if (function.path("parameters").isObject()) {
        declaration.set("parametersJsonSchema", function.get("parameters"));
      }
    }
    JsonNode asked = tooling.get("tool_choice");
    if (asked == null) {
      return;
    }
    ObjectNode calling = body.putObject("toolConfig").putObject("functionCallingConfig");
    if (asked.isObject()) {
      calling.put("mode", "ANY");
      calling
          .putArray("allowedFunctionNames")
          .add(asked.path("function").path("name").asText());
    } else {
      calling.put(
          "mode",
          switch (asked.asText()) {
            case "required" -> "ANY";
            case "none" -> "NONE";
            default -> "AUTO";
          });
    }
  }

  @Override
  Generation whole(GenerationRequest request, JsonNode json, TokenSink sink) {
    JsonNode candidate = json.path("candidates").path(0);
    if (candidate.isMissingNode()) {
      throw blockedOrMalformed(json);
    }
    StringBuilder text = new StringBuilder();
    ArrayNode calls = Json.MAPPER.createArrayNode();
    read(candidate, text, calls);
    if (!text.isEmpty()) {
      sink.text(text.toString());
    }
    return new Generation(
        text.toString(),
        finishReason(candidate.path("finishReason").asText(null), !calls.isEmpty()),
        usage(json.path("usageMetadata")),
        calls.isEmpty() ? null : calls);
  }

  /** A candidate's text and calls (a call without an id of Gemini's gets one of ours). */
  private static void read(JsonNode candidate, StringBuilder text, ArrayNode calls) {
    for (JsonNode part : candidate.path("content").path("parts")) {
      if (part.path("thought").asBoolean(false)) {
        continue; // a thought summary is not the answer
      }
      if (part.has("text")) {
        text.append(part.get("text").asText());
      } else if (part.has("functionCall")) {
        JsonNode call = part.get("functionCall");
        ObjectNode converted = Json.MAPPER
            .createObjectNode()
            .put("id", call.hasNonNull("id") ? call.get("id").asText() : "call_" + calls.size())
            .put("type", "function");
        converted
            .putObject("function")
            .put("name", call.path("name").asText())
            .put("arguments", Json.write(call.path("args")));
        calls.add(converted);
      }
    }
  }

  /** A stream of whole GenerateContentResponse objects, each holding the next parts. */
  @Override
  Generation relay(GenerationRequest request, Events events, TokenSink sink) throws IOException {
    StringBuilder text = new StringBuilder();
    String finishReason = null;
    Generation.Usage usage = null;
    int calls = 0;
    String data;
    while ((data = events.nextData()) != null) {
      JsonNode chunk = parse(data);
      if (chunk.hasNonNull("error")) {
        throw new EngineException(
            EngineException.Failure.UPSTREAM_ERROR,
            "The upstream failed during the stream: " + UpstreamErrors.message(chunk));
      }
      JsonNode candidate = chunk.path("candidates").path(0);
      StringBuilder piece = new StringBuilder();
      ArrayNode pieceCalls = Json.MAPPER.createArrayNode();
      read(candidate, piece, pieceCalls);
      if (!piece.isEmpty()) {
        text.append(piece);
        sink.text(piece.toString());
      }
      for (JsonNode call : pieceCalls) {
        ((ObjectNode) call).put("index", calls++);
        sink.toolCalls(Json.MAPPER.createArrayNode().add(call));
      }
      if (chunk.has("usageMetadata")) {
        usage = usage(chunk.get("usageMetadata"));
      }
      if (candidate.hasNonNull("finishReason")) {
        finishReason = finishReason(candidate.get("finishReason").asText(), calls > 0);
      }
    }
    if (finishReason == null) {
      throw cut();
    }
    return new Generation(text.toString(), finishReason, usage, null);
  }

  private static EngineException blockedOrMalformed(JsonNode json) {
    JsonNode feedback = json.path("promptFeedback");
    if (feedback.hasNonNull("blockReason")) {
      return new EngineException(
          EngineException.Failure.REJECTED,
          "The provider blocked the prompt: " + feedback.get("blockReason").asText());
    }
    return malformed("the response has no candidates");
  }

  /** Gemini's finish reasons in OpenAI's words. */
  static String finishReason(String reason, boolean called) {
    if (reason == null) {
      return called ? "tool_calls" : Generation.STOP;
    }
    return switch (reason) {
      case "MAX_TOKENS" -> Generation.LENGTH;
      case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY" ->
        "content_filter";
      default -> called ? "tool_calls" : Generation.STOP;
    };
  }

  private static Generation.Usage usage(JsonNode metadata) {
    if (metadata == null || !metadata.path("promptTokenCount").isIntegralNumber()) {
      return null;
    }
    return new Generation.Usage(
        metadata.path("promptTokenCount").asInt(),
        metadata.path("candidatesTokenCount").asInt(0)
            + metadata.path("thoughtsTokenCount").asInt(0));
  }
}
