package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.genai.types.Candidate;
import com.google.genai.types.Content;
import com.google.genai.types.FinishReason;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.google.genai.types.Part;
import com.sun.net.httpserver.HttpExchange;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Google's Gemini API as its reference publishes it: {@code POST
 * /v1beta/models/{model}:generateContent} (and {@code :streamGenerateContent?alt=sse}) with
 * {@code x-goog-api-key}, {@code contents} of {@code user} and {@code model} turns whose parts
 * hold one of {@code text}, {@code functionCall}, {@code functionResponse}; {@code
 * systemInstruction}, {@code generationConfig} (its own field names only), {@code tools} of
 * {@code functionDeclarations}, {@code toolConfig}; answers candidates (text, or a {@code
 * functionCall} part when tools are offered and the user spoke last) with {@code usageMetadata};
 * errors in its {@code {error: {code, message, status}}} shape. {@code GET /v1beta/models} lists
 * one model. Its answers are built from the official Gen AI SDK's types ({@code
 * GenerateContentResponse}, {@code Candidate}, {@code Part}) and written as the SDK writes them.
 */
public final class FakeGemini extends FakeProvider {
  public static final List<String> PIECES = List.of("Hello", " from", " Gemini", ".");
  private static final Pattern COUNT = Pattern.compile("/v1beta/models/([^/:]+):countTokens");
  private static final Pattern GENERATE =
      Pattern.compile("/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)");
  private static final Set<String> FIELDS = Set.of(
      "contents",
      "systemInstruction",
      "generationConfig",
      "tools",
      "toolConfig",
      "safetySettings",
      "cachedContent");
  private static final Set<String> CONFIG = Set.of(
      "temperature",
      "topP",
      "topK",
      "maxOutputTokens",
      "stopSequences",
      "candidateCount",
      "responseMimeType",
      "responseSchema",
      "responseJsonSchema",
      "seed",
      "presencePenalty",
      "frequencyPenalty",
      "responseLogprobs",
      "logprobs",
      "thinkingConfig");

  public FakeGemini(String key) {
    super(key);
  }

  @Override
  public String baseUrl() {
    return origin() + "/v1beta";
  }

  @Override
  protected void handle(HttpExchange exchange) throws IOException {
    if (!keyIs(exchange.getRequestHeaders().getFirst("x-goog-api-key"))) {
      error(exchange, 403, "PERMISSION_DENIED", "API key not valid. Please pass a valid API key.");
      return;
    }
    String path = exchange.getRequestURI().getPath();
    if (exchange.getRequestMethod().equals("GET") && path.equals("/v1beta/models")) {
      send(
          exchange,
          200,
          "{\"models\":[{\"name\":\"models/gemini-test\","
              + "\"supportedGenerationMethods\":[\"generateContent\"]}]}");
      return;
    }
    Matcher counting = COUNT.matcher(path);
    if (exchange.getRequestMethod().equals("POST") && counting.matches()) {
      countTokens(exchange, counting.group(1));
      return;
    }
    Matcher generate = GENERATE.matcher(path);
    if (!exchange.getRequestMethod().equals("POST") || !generate.matches()) {
      error(exchange, 404, "NOT_FOUND", "no route " + path);
      return;
    }
    boolean stream = generate.group(2).equals("streamGenerateContent");
    if (stream && !"alt=sse".equals(exchange.getRequestURI().getQuery())) {
      error(exchange, 400, "INVALID_ARGUMENT", "this fake streams only with alt=sse");
      return;
    }
    JsonNode body = received(exchange);
    String wrong = check(body);
    if (wrong != null) {
      refused(wrong);
      error(exchange, 400, "INVALID_ARGUMENT", wrong);
      return;
    }
    if (failing() != 0) {
      error(
          exchange,
          failing(),
          failing() == 429 ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE",
          "the fake was told to fail");
      return;
    }
    ObjectNode part = answer(body);
    if (stream) {
      stream(exchange, body, part);
    } else {
      send(exchange, 200, Json.write(response(body, List.of(part), true)));
    }
  }

  /**
   * {@code models/{model}:countTokens}, as its reference has it: {@code contents}, or a whole
   * {@code generateContentRequest} naming the same model; answers {@code totalTokens}, {@link
   * #countOf} the request (a count the gateway's tokenizer never gives).
   */
  private void countTokens(HttpExchange exchange, String model) throws IOException {
    JsonNode body = received(exchange);
    JsonNode request = body.path("generateContentRequest");
    String wrong = null;
    for (var names = body.fieldNames(); names.hasNext() && wrong == null; ) {
      String name = names.next();
      if (!name.equals("contents") && !name.equals("generateContentRequest")) {
        wrong = "Invalid JSON payload received. Unknown name \"" + name + "\"";
      }
    }
    if (wrong == null && request.isObject()) {
      if (!request.path("model").asText().equals("models/" + model)) {
        wrong = "generateContentRequest.model must be models/" + model;
      } else {
        ObjectNode rest = ((ObjectNode) request).deepCopy();
        rest.remove("model");
        wrong = check(rest);
      }
    }
    if (wrong == null && !(request.isObject() ? request : body).path("contents").isArray()) {
      wrong = "contents is required";
    }
    if (wrong != null) {
      refused(wrong);
      error(exchange, 400, "INVALID_ARGUMENT", wrong);
      return;
    }
    send(exchange, 200, "{\"totalTokens\":" + countOf(body) + "}");
  }

  /** What this fake counts a countTokens body as: 2,000 and a token a character of it. */
  public static int countOf(JsonNode body) {
    return 2_000 + body.toString().length();
  }

  private static String check(JsonNode body) {
    for (var names = body.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        return "Invalid JSON payload received. Unknown name \"" + name + "\"";
      }
    }
    for (var names = body.path("generationConfig").fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!CONFIG.contains(name)) {
        return "Invalid JSON payload received. Unknown name \"" + name
            + "\" at 'generation_config'";
      }
    }
    if (body.path("generationConfig").path("stopSequences").size() > 5) {
      return "generation_config.stop_sequences: at most 5";
    }
    JsonNode contents = body.path("contents");
    if (!contents.isArray() || contents.isEmpty()) {
      return "* GenerateContentRequest.contents: contents is not specified";
    }
    for (int i = 0; i < contents.size(); i++) {
      JsonNode content = contents.get(i);
      if (!Set.of("user", "model").contains(content.path("role").asText())) {
        return "contents[" + i + "].role: must be user or model";
      }
      for (JsonNode part : content.path("parts")) {
        int kinds = (part.has("text") ? 1 : 0)
            + (part.has("functionCall") ? 1 : 0)
            + (part.has("functionResponse") ? 1 : 0)
            + (part.has("inlineData") ? 1 : 0);
        if (part.has("inlineData")
            && (!part.get("inlineData").path("mimeType").isTextual()
                || !part.get("inlineData").path("data").isTextual())) {
          return "contents[" + i + "].parts: inlineData needs mimeType and data";
        }
        if (kinds != 1) {
          return "contents[" + i + "].parts: each part holds exactly one kind of data";
        }
        if (part.has("functionResponse")
            && (!part.get("functionResponse").path("name").isTextual()
                || !part.get("functionResponse").path("response").isObject())) {
          return "contents[" + i + "].parts: functionResponse needs name and response";
        }
      }
    }
    for (JsonNode tool : body.path("tools")) {
      for (JsonNode declaration : tool.path("functionDeclarations")) {
        if (!declaration.path("name").isTextual()) {
          return "tools.function_declarations: name is required";
        }
      }
    }
    return null;
  }

  private static ObjectNode answer(JsonNode body) {
    JsonNode contents = body.path("contents");
    JsonNode lastParts = contents.get(contents.size() - 1).path("parts");
    boolean userSpoke = lastParts.size() > 0 && lastParts.get(0).has("text");
    boolean toolsOff = body.path("toolConfig")
        .path("functionCallingConfig")
        .path("mode")
        .asText()
        .equals("NONE");
    JsonNode declarations = body.path("tools").path(0).path("functionDeclarations");
    if (declarations.size() > 0 && userSpoke && !toolsOff) {
      ObjectNode part = Json.MAPPER.createObjectNode();
      ObjectNode call = part.putObject("functionCall")
          .put("name", declarations.get(0).path("name").asText());
      call.putObject("args").put("city", "Lyon");
      return part;
    }
    String json = body.path("generationConfig").path("responseMimeType").asText();
    return Json.MAPPER
        .createObjectNode()
        .put(
            "text",
            json.equals("application/json") ? "{\"greeting\":\"hello\"}" : String.join("", PIECES));
  }

  /** An answer built from the official Gen AI SDK's types and written as the SDK writes them. */
  private static ObjectNode response(JsonNode body, List<ObjectNode> parts, boolean last) {
    List<Part> sdkParts = new ArrayList<>();
    for (ObjectNode part : parts) {
      if (part.has("functionCall")) {
        JsonNode call = part.get("functionCall");
        sdkParts.add(Part.fromFunctionCall(
            call.path("name").asText(), Json.MAPPER.convertValue(call.path("args"), Map.class)));
      } else {
        sdkParts.add(Part.fromText(part.path("text").asText()));
      }
    }
    Candidate.Builder candidate = Candidate.builder()
        .content(Content.builder().role("model").parts(sdkParts).build())
        .index(0);
    if (last) {
      candidate.finishReason(new FinishReason(FinishReason.Known.STOP));
    }
    int prompt = body.path("contents").toString().split("\\s+").length;
    String json = GenerateContentResponse.builder()
        .candidates(candidate.build())
        .usageMetadata(GenerateContentResponseUsageMetadata.builder()
            .promptTokenCount(prompt)
            .candidatesTokenCount(4)
            .totalTokenCount(prompt + 4)
            .build())
        .modelVersion("gemini-test")
        .build()
        .toJson();
    return (ObjectNode) Json.read(json, JsonNode.class);
  }

  private void stream(HttpExchange exchange, JsonNode body, ObjectNode part) throws IOException {
    List<ObjectNode> chunks = new ArrayList<>();
    if (part.has("functionCall") || !part.path("text").asText().equals(String.join("", PIECES))) {
      chunks.add(response(body, List.of(part), true));
    } else {
      for (int i = 0; i < PIECES.size(); i++) {
        chunks.add(response(
            body,
            List.of(Json.MAPPER.createObjectNode().put("text", PIECES.get(i))),
            i == PIECES.size() - 1));
      }
    }
    OutputStream out = openStream(exchange);
    for (int i = 0; i < chunks.size(); i++) {
      if (cutting() >= 0 && i >= cutting()) {
        return;
      }
      write(out, "data: " + Json.write(chunks.get(i)) + "\r\n\r\n");
    }
  }

  private static void error(HttpExchange exchange, int status, String code, String message)
      throws IOException {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.putObject("error").put("code", status).put("message", message).put("status", code);
    send(exchange, status, Json.write(body));
  }
}
