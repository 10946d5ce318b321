package io.engram.inference.remote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.Sampling;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.httpclient.ClientResponse;
import io.engram.platform.httpclient.MalformedResponseException;
import io.engram.platform.httpclient.OriginClient;
import io.engram.platform.httpclient.UnreachableException;
import io.engram.platform.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Any OpenAI-compatible server (vLLM, llama.cpp, Ollama, a hosted API). The client's mode is kept:
 * a streamed request is streamed upstream and each upstream chunk is handed on as it is read, with
 * no buffering; a plain request is a plain upstream request.
 *
 * <p>REQUEST_TIMEOUT bounds the wait for the upstream's answer and every silence inside a stream
 * (the socket's read timeout); when the caller leaves, the upstream connection is closed, which
 * aborts the upstream request.
 */
public final class RemoteEngine implements Engine, AutoCloseable {
  private static final int MAX_ERROR_BODY = 64 * 1024;
  /** A whole (not streamed) answer larger than this is not a chat completion. */
  private static final int MAX_WHOLE_BODY = 64 * 1024 * 1024;

  private final Endpoint endpoint;
  private final URI baseUrl;
  private final String upstreamModel;
  private final Duration timeout;
  private final OriginClient client;
  private final boolean ownsClient;
  private final String[] streamHeaders;
  private final String[] wholeHeaders;

  /**
   * Where and how to call one provider: its base URL (OpenAI's kind: including {@code /v1};
   * Azure's: the resource's address), its key (null: none), extra headers sent on every call, and
   * for Azure OpenAI the {@code api-version} (the deployment is then named in the path and the key
   * sent as {@code api-key}). {@code replyLimitField} is the field the reply's limit is set in when
   * the client set none.
   */
  public record Endpoint(
      URI baseUrl,
      String apiKey,
      java.util.Map<String, String> headers,
      String azureApiVersion,
      String replyLimitField) {
    public Endpoint {
      String base = baseUrl.toString();
      baseUrl = URI.create(base.endsWith("/") ? base : base + "/");
      apiKey = apiKey == null || apiKey.isEmpty() ? null : apiKey;
      headers = java.util.Map.copyOf(headers);
    }

    /** A client of the endpoint's origin, for the engines of its models to share. */
    public OriginClient client(Duration timeout) {
      return new OriginClient(baseUrl, timeout, timeout, null);
    }
  }

  /**
   * @param baseUrl the upstream's base URL including {@code /v1}
   * @param upstreamModel the model name sent upstream; empty: the client's model id is sent as is
   */
  public RemoteEngine(URI baseUrl, String apiKey, String upstreamModel, Duration timeout) {
    this(
        new Endpoint(baseUrl, apiKey, java.util.Map.of(), null, "max_tokens"),
        upstreamModel,
        timeout,
        null);
  }

  /**
   * An engine for one model of an endpoint, calling it through {@code shared} (the endpoint's
   * client, closed by its owner) or, when null, a client of its own.
   */
  public RemoteEngine(
      Endpoint endpoint, String upstreamModel, Duration timeout, OriginClient shared) {
    this.endpoint = endpoint;
    this.baseUrl = endpoint.baseUrl();
    this.upstreamModel = upstreamModel == null || upstreamModel.isEmpty() ? null : upstreamModel;
    this.timeout = timeout;
    this.ownsClient = shared == null;
    this.client = shared == null ? endpoint.client(timeout) : shared;
    this.streamHeaders = headers("text/event-stream");
    this.wholeHeaders = headers("application/json");
  }

  public URI baseUrl() {
    return baseUrl;
  }

  @Override
  public java.util.Optional<URI> origin() {
    return java.util.Optional.of(baseUrl);
  }

  /**
   * Tools, tool messages, structured output, several choices, log probabilities and logit bias
   * go to the upstream as the client sent them.
   */
  @Override
  public boolean carries(String field, JsonNode value) {
    return true;
  }

  @Override
  public Generation generate(GenerationRequest request, TokenSink sink) {
    try (ClientResponse response = send(request)) {
      InputStream body = response.body();
      if (response.status() != 200) {
        throw UpstreamErrors.fromStatus(
            response.status(), readBounded(body), response.header("Retry-After").orElse(null));
      }
      sink.begin();
      return request.stream() ? relay(request, response, sink) : whole(request, body, sink);
    } catch (SocketTimeoutException e) {
      throw new EngineException(
          EngineException.Failure.TIMEOUT,
          "The upstream was silent for more than " + timeoutOf(request).toSeconds()
              + " seconds while answering",
          null,
          e);
    } catch (MalformedResponseException e) {
      throw malformed(e.getMessage());
    } catch (IOException e) {
      throw new EngineException(
          EngineException.Failure.CUT,
          "The upstream connection failed while reading the " + "response: " + e.getMessage(),
          null,
          e);
    }
  }

  private ClientResponse send(GenerationRequest request) {
    String target = target(request.isChat() ? "chat/completions" : "completions", request.model());
    try {
      return client.send(
          "POST",
          target,
          request.stream() ? streamHeaders : wholeHeaders,
          Json.MAPPER.writeValueAsBytes(upstreamBody(request)),
          request.timeout());
    } catch (UnreachableException e) {
      throw new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "The upstream at " + baseUrl + " could not be reached",
          null,
          e);
    } catch (SocketTimeoutException e) {
      throw new EngineException(
          EngineException.Failure.TIMEOUT,
          "The upstream did not answer within " + timeoutOf(request).toSeconds() + " seconds",
          null,
          e);
    } catch (MalformedResponseException e) {
      throw malformed(e.getMessage());
    } catch (IOException e) {
      throw new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "The upstream request failed: " + e.getMessage(),
          null,
          e);
    }
  }

  /**
   * The provider's model names (OpenAI's {@code GET /models}; Azure's {@code GET
   * /openai/models}): a check that the address, the key and the headers work.
   *
   * @throws EngineException as a generation would fail on the same answer
   */
  public java.util.List<String> listModels() {
    String target = endpoint.azureApiVersion() == null
        ? baseUrl.getRawPath() + "models"
        : baseUrl.getRawPath() + "openai/models?api-version="
            + java.net.URLEncoder.encode(endpoint.azureApiVersion(), StandardCharsets.UTF_8);
    try (ClientResponse response = client.send("GET", target, wholeHeaders, new byte[0])) {
      if (response.status() != 200) {
        throw UpstreamErrors.fromStatus(
            response.status(),
            readBounded(response.body()),
            response.header("Retry-After").orElse(null));
      }
      JsonNode json = parse(
          new String(response.body().readNBytes(MAX_ERROR_BODY * 16), StandardCharsets.UTF_8));
      java.util.List<String> names = new java.util.ArrayList<>();
      json.path("data").forEach(m -> names.add(m.path("id").asText()));
      return names;
    } catch (UnreachableException e) {
      throw new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "The provider at " + baseUrl + " could not be reached",
          null,
          e);
    } catch (SocketTimeoutException e) {
      throw new EngineException(
          EngineException.Failure.TIMEOUT, "The provider did not answer in time", null, e);
    } catch (MalformedResponseException e) {
      throw malformed(e.getMessage());
    } catch (IOException e) {
      throw new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "The provider request failed: " + e.getMessage(),
          null,
          e);
    }
  }

  /** The path of an operation: under the base URL, or Azure's deployment path and version. */
  private String target(String operation, String requestedModel) {
    if (endpoint.azureApiVersion() == null) {
      return baseUrl.getRawPath() + operation;
    }
    String deployment = upstreamModel == null ? requestedModel : upstreamModel;
    return baseUrl.getRawPath() + "openai/deployments/"
        + java.net.URLEncoder.encode(deployment, StandardCharsets.UTF_8) + "/" + operation
        + "?api-version="
        + java.net.URLEncoder.encode(endpoint.azureApiVersion(), StandardCharsets.UTF_8);
  }

  /** The call's headers: the endpoint's own first, then what this engine sets (it wins). */
  private String[] headers(String accept) {
    java.util.List<String> headers = new java.util.ArrayList<>();
    endpoint.headers().forEach((name, value) -> {
      headers.add(name);
      headers.add(value);
    });
    headers.addAll(java.util.List.of("Content-Type", "application/json", "Accept", accept));
    if (endpoint.apiKey() != null) {
      if (endpoint.azureApiVersion() != null) {
        headers.addAll(java.util.List.of("api-key", endpoint.apiKey()));
      } else {
        headers.addAll(java.util.List.of("Authorization", "Bearer " + endpoint.apiKey()));
      }
    }
    return headers.toArray(String[]::new);
  }

  /** The request's own timeout (its organization's REQUEST_TIMEOUT), else this engine's. */
  private Duration timeoutOf(GenerationRequest request) {
    return request.timeout() == null ? timeout : request.timeout();
  }

  private ObjectNode upstreamBody(GenerationRequest request) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.put("model", upstreamModel == null ? request.model() : upstreamModel);
    if (request.isChat()) {
      var messages = body.putArray("messages");
      for (ChatMessage m : request.messages()) {
        ObjectNode message = messages.addObject().put("role", m.role()).put("content", m.content());
        if (m.tooling() != null) {
          message.setAll(m.tooling());
        }
      }
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

  private Generation whole(GenerationRequest request, InputStream body, TokenSink sink)
      throws IOException {
    byte[] bytes = body.readNBytes(MAX_WHOLE_BODY + 1);
    if (bytes.length > MAX_WHOLE_BODY) {
      throw malformed("the response is larger than " + MAX_WHOLE_BODY + " bytes");
    }
    JsonNode json = parse(new String(bytes, StandardCharsets.UTF_8));
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

  /** Reads the upstream's SSE stream line by line and hands on each chunk's text at once. */
  private Generation relay(GenerationRequest request, ClientResponse response, TokenSink sink)
      throws IOException {
    StringBuilder text = new StringBuilder();
    String finishReason = null;
    Generation.Usage usage = null;
    boolean done = false;
    sink.onClientGone(response::abort);
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
    String line;
    while ((line = readLine(lines, response, request)) != null) {
      if (!line.startsWith("data:")) {
        continue; // comments (keep-alives), event names, blank separators
      }
      String data = line.substring(5).strip();
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
      throw new EngineException(
          EngineException.Failure.CUT,
          "The upstream stream ended before the generation " + "finished");
    }
    return new Generation(
        text.toString(), finishReason == null ? Generation.STOP : finishReason, usage);
  }

  private String readLine(BufferedReader lines, ClientResponse response, GenerationRequest request)
      throws IOException {
    try {
      return lines.readLine();
    } catch (IOException e) {
      if (response.aborted()) {
        throw new ClientGoneException(e);
      }
      if (e instanceof SocketTimeoutException) {
        throw new EngineException(
            EngineException.Failure.TIMEOUT,
            "The upstream stream was silent for more than " + timeoutOf(request).toSeconds()
                + " seconds",
            null,
            e);
      }
      throw e;
    }
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

  private static JsonNode parse(String json) {
    try {
      JsonNode node = Json.MAPPER.readTree(json);
      if (node == null || !node.isObject()) {
        throw malformed("expected a JSON object");
      }
      return node;
    } catch (IOException e) {
      throw malformed("not JSON: " + e.getMessage());
    }
  }

  private static EngineException malformed(String why) {
    return new EngineException(
        EngineException.Failure.MALFORMED,
        "The upstream's response is not an " + "OpenAI-compatible response: " + why);
  }

  private static String readBounded(InputStream body) throws IOException {
    return new String(body.readNBytes(MAX_ERROR_BODY), StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    if (ownsClient) {
      client.close();
    }
  }
}
