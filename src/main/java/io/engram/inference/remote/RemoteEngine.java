package io.engram.inference.remote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.httpclient.OriginClient;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Any server with OpenAI's API (OpenAI, vLLM, llama.cpp, Ollama, a hosted API), and Azure OpenAI
 * (its deployment path, {@code api-version} and {@code api-key} header). The client's mode is kept:
 * a streamed request is streamed upstream and each upstream chunk is handed on as it is read, with
 * no buffering; a plain request is a plain upstream request. Every field of the client's request
 * goes on as the client sent it.
 */
public final class RemoteEngine extends ProviderEngine {
  private final String[] streamHeaders;
  private final String[] wholeHeaders;

  /**
   * @param baseUrl the upstream's base URL including {@code /v1}
   * @param upstreamModel the model name sent upstream; empty: the client's model id is sent as is
   */
  public RemoteEngine(URI baseUrl, String apiKey, String upstreamModel, Duration timeout) {
    this(new Endpoint(baseUrl, apiKey, Map.of(), null, "max_tokens"), upstreamModel, timeout, null);
  }

  /**
   * An engine for one model of an endpoint, calling it through {@code shared} (the endpoint's
   * client, closed by its owner) or, when null, a client of its own.
   */
  public RemoteEngine(
      Endpoint endpoint, String upstreamModel, Duration timeout, OriginClient shared) {
    super(endpoint, upstreamModel, timeout, shared);
    this.streamHeaders = apiHeaders("text/event-stream");
    this.wholeHeaders = apiHeaders("application/json");
  }

  private String[] apiHeaders(String accept) {
    List<String> own =
        new ArrayList<>(List.of("Content-Type", "application/json", "Accept", accept));
    if (endpoint.apiKey() != null) {
      own.addAll(
          endpoint.azureApiVersion() != null
              ? List.of("api-key", endpoint.apiKey())
              : List.of("Authorization", "Bearer " + endpoint.apiKey()));
    }
    return headers(own.toArray(String[]::new));
  }

  /**
   * Tools, tool messages, structured output, several choices, log probabilities, logit bias and
   * every other parameter go to the upstream as the client sent them.
   */
  @Override
  public boolean carries(String field, JsonNode value) {
    return true;
  }

  /**
   * The provider's model names (OpenAI's {@code GET /models}; Azure's {@code GET
   * /openai/models}): a check that the address, the key and the headers work.
   *
   * @throws EngineException as a generation would fail on the same answer
   */
  @Override
  public List<String> listModels() {
    String target = endpoint.azureApiVersion() == null
        ? baseUrl.getRawPath() + "models"
        : baseUrl.getRawPath() + "openai/models?api-version=" + encode(endpoint.azureApiVersion());
    List<String> names = new ArrayList<>();
    getJson(target, wholeHeaders)
        .path("data")
        .forEach(m -> names.add(m.path("id").asText()));
    return names;
  }

  @Override
  String providerName() {
    return endpoint.azureApiVersion() == null ? "openai" : "azure.ai.openai";
  }

  @Override
  String target(GenerationRequest request) {
    return target(request.isChat() ? "chat/completions" : "completions", modelOf(request));
  }

  /** The path of an operation: under the base URL, or Azure's deployment path and version. */
  private String target(String operation, String model) {
    if (endpoint.azureApiVersion() == null) {
      return baseUrl.getRawPath() + operation;
    }
    return baseUrl.getRawPath() + "openai/deployments/" + encode(model) + "/" + operation
        + "?api-version=" + encode(endpoint.azureApiVersion());
  }

  /** OpenAI's {@code POST /embeddings}: the vectors in order, and the provider's token count. */
  @Override
  public Vectors embed(
      List<String> texts, Integer dimensions, String user, Duration wait, String orgId) {
    ObjectNode body = Json.MAPPER.createObjectNode().put("model", upstreamModel);
    texts.forEach(body.putArray("input")::add);
    body.put("encoding_format", "float");
    if (dimensions != null) {
      body.put("dimensions", dimensions);
    }
    if (user != null) {
      body.put("user", user);
    }
    JsonNode answer =
        embeddings(upstreamModel, target("embeddings", upstreamModel), wholeHeaders, body, wait);
    float[][] vectors = new float[texts.size()][];
    for (JsonNode item : answer.path("data")) {
      int index = item.path("index").asInt(-1);
      float[] vector = vector(item.path("embedding"));
      if (index < 0 || index >= vectors.length || vector == null) {
        throw malformed("an embedding without its index or its numbers");
      }
      vectors[index] = vector;
    }
    for (float[] vector : vectors) {
      if (vector == null) {
        throw malformed("fewer embeddings than inputs");
      }
    }
    return new Vectors(
        List.of(vectors), answer.path("usage").path("prompt_tokens").asInt(-1));
  }

  private static String encode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  @Override
  String[] headers(GenerationRequest request) {
    return request.stream() ? streamHeaders : wholeHeaders;
  }

  @Override
  ObjectNode body(GenerationRequest request) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.put("model", modelOf(request));
    if (request.isChat()) {
      var messages = body.putArray("messages");
      request.messages().forEach(m -> messages.add(m.toJson()));
    } else {
      body.put("prompt", request.prompt());
    }
    Sampling sampling = request.sampling();
    // The client's sampling fields as it sent them, and no default of ours; the one addition is
    // the reply's limit the organization's plan, budget and the model's context set, when the
    // client set none (an upstream's own default could run past what the plan allows).
    body.setAll(sampling.asSent());
    if (!sampling.capSent()) {
      // The legacy completions API knows only max_tokens.
      body.put(request.isChat() ? endpoint.replyLimitField() : "max_tokens", sampling.maxTokens());
    }
    if (request.user() != null) {
      body.put("user", request.user());
    }
    if (request.tooling() != null) {
      body.setAll(request.tooling());
    }
    body.put("stream", request.stream());
    if (request.stream()) {
      // Asked always: the upstream's own count is the most exact usage there is.
      body.putObject("stream_options").put("include_usage", true);
    }
    return body;
  }

  @Override
  Generation whole(GenerationRequest request, JsonNode json, TokenSink sink) {
    JsonNode choice = json.path("choices").path(0);
    JsonNode text = request.isChat() ? choice.path("message").path("content") : choice.path("text");
    JsonNode toolCalls = choice.path("message").get("tool_calls");
    boolean calls = toolCalls != null && toolCalls.isArray() && !toolCalls.isEmpty();
    if (!text.isTextual() && !text.isNull() && !(calls && text.isMissingNode())) {
      throw malformed(
          "the response has no choices[0]" + (request.isChat() ? ".message.content" : ".text"));
    }
    String content = text.isTextual() ? text.asText() : "";
    if (!content.isEmpty()) {
      sink.text(content);
    }
    JsonNode choices = request.relaysChoices() ? json.get("choices") : null;
    return new Generation(
        content, finishReason(choice), usage(json.get("usage")), calls ? toolCalls : null, choices);
  }

  /** Reads the upstream's chunks and hands on each one's text (or choices) at once. */
  @Override
  Generation relay(GenerationRequest request, Events events, TokenSink sink) throws IOException {
    StringBuilder text = new StringBuilder();
    String finishReason = null;
    Generation.Usage usage = null;
    boolean done = false;
    String data;
    while ((data = events.nextData()) != null) {
      if (data.equals("[DONE]")) {
        done = true;
        break;
      }
      JsonNode chunk = parse(data);
      if (chunk.hasNonNull("error")) {
        throw new EngineException(
            EngineException.Failure.UPSTREAM_ERROR,
            "The upstream failed during the stream: " + UpstreamErrors.message(chunk));
      }
      if (chunk.hasNonNull("usage")) {
        usage = usage(chunk.get("usage"));
      }
      if (request.relaysChoices()) {
        // Every choice goes on whole; the first one's text and end are this generation's own.
        for (JsonNode choice : chunk.path("choices")) {
          if (choice.path("index").asInt(0) == 0) {
            text.append(choice.path("delta").path("content").asText(""));
            finishReason = choice.hasNonNull("finish_reason")
                ? choice.get("finish_reason").asText()
                : finishReason;
          }
          sink.choice(choice);
        }
        continue;
      }
      JsonNode choice = chunk.path("choices").path(0);
      JsonNode piece =
          request.isChat() ? choice.path("delta").path("content") : choice.path("text");
      if (piece.isTextual() && !piece.asText().isEmpty()) {
        text.append(piece.asText());
        sink.text(piece.asText());
      }
      JsonNode toolCalls = choice.path("delta").get("tool_calls");
      if (request.isChat() && toolCalls != null && toolCalls.isArray() && !toolCalls.isEmpty()) {
        sink.toolCalls(toolCalls);
      }
      if (choice.hasNonNull("finish_reason")) {
        finishReason = choice.get("finish_reason").asText();
      }
    }
    if (!done && finishReason == null) {
      throw cut();
    }
    return new Generation(
        text.toString(), finishReason == null ? Generation.STOP : finishReason, usage);
  }

  private static String finishReason(JsonNode choice) {
    return choice.hasNonNull("finish_reason")
        ? choice.get("finish_reason").asText()
        : Generation.STOP;
  }

  private static Generation.Usage usage(JsonNode usage) {
    if (usage == null
        || !usage.path("prompt_tokens").canConvertToInt()
        || !usage.path("completion_tokens").canConvertToInt()
        || !usage.path("prompt_tokens").isIntegralNumber()) {
      return null;
    }
    return new Generation.Usage(
        usage.get("prompt_tokens").asInt(), usage.get("completion_tokens").asInt());
  }
}
