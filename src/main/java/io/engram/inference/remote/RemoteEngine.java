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

  private final URI baseUrl;
  private final String apiKey;
  private final String upstreamModel;
  private final Duration timeout;
  private final OriginClient client;

  /**
   * @param baseUrl the upstream's base URL including {@code /v1}
   * @param upstreamModel the model name sent upstream; empty: the client's model id is sent as is
   */
  public RemoteEngine(URI baseUrl, String apiKey, String upstreamModel, Duration timeout) {
    String base = baseUrl.toString();
    this.baseUrl = URI.create(base.endsWith("/") ? base : base + "/");
    this.apiKey = apiKey == null || apiKey.isEmpty() ? null : apiKey;
    this.upstreamModel = upstreamModel == null || upstreamModel.isEmpty() ? null : upstreamModel;
    this.timeout = timeout;
    this.client = new OriginClient(this.baseUrl, timeout, timeout, null);
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
    String[] headers = apiKey == null
        ? new String[] {"Content-Type", "application/json", "Accept", accept(request)}
        : new String[] {
          "Content-Type",
          "application/json",
          "Accept",
          accept(request),
          "Authorization",
          "Bearer " + apiKey
        };
    String target = baseUrl.getRawPath() + (request.isChat() ? "chat/completions" : "completions");
    try {
      return client.send(
          "POST",
          target,
          headers,
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

  /** The request's own timeout (its organization's REQUEST_TIMEOUT), else this engine's. */
  private Duration timeoutOf(GenerationRequest request) {
    return request.timeout() == null ? timeout : request.timeout();
  }

  private static String accept(GenerationRequest request) {
    return request.stream() ? "text/event-stream" : "application/json";
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
    body.put("max_tokens", sampling.maxTokens());
    body.put("temperature", sampling.temperature());
    body.put("top_p", sampling.topP());
    body.put("frequency_penalty", sampling.frequencyPenalty());
    body.put("presence_penalty", sampling.presencePenalty());
    if (!sampling.stop().isEmpty()) {
      var stop = body.putArray("stop");
      sampling.stop().forEach(stop::add);
    }
    if (sampling.seed() != null) {
      body.put("seed", sampling.seed());
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
    client.close();
  }
}
