package io.engram.inference.remote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Embeds;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.GenAiSpans;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.GenerationRequest;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.httpclient.ClientResponse;
import io.engram.platform.httpclient.MalformedResponseException;
import io.engram.platform.httpclient.OriginClient;
import io.engram.platform.httpclient.UnreachableException;
import io.engram.platform.json.Json;
import io.engram.platform.tracing.Traces;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A model on another server, whatever API it speaks: the call (its headers, REQUEST_TIMEOUT as the
 * longest wait and the longest silence, the connection closed when the caller leaves), the
 * provider's errors as the gateway's failures, and the answer read whole or as a stream of events,
 * each piece handed on as it is read. Each API ({@link RemoteEngine} for OpenAI's, {@link
 * AnthropicEngine}, {@link GeminiEngine}) says where to send, what to send and how to read what
 * comes back.
 */
public abstract class ProviderEngine implements Engine, Embeds, AutoCloseable {
  static final int MAX_ERROR_BODY = 64 * 1024;
  /** A whole (not streamed) answer larger than this is not a model's answer. */
  static final int MAX_WHOLE_BODY = 64 * 1024 * 1024;

  /**
   * Where and how to call one provider: its base URL (for OpenAI's API including {@code /v1}), its
   * key (null: none), extra headers sent on every call, for Azure OpenAI the {@code api-version},
   * and the field the reply's limit is set in when the client set none.
   */
  public record Endpoint(
      URI baseUrl,
      String apiKey,
      Map<String, String> headers,
      String azureApiVersion,
      String replyLimitField) {
    public Endpoint {
      String base = baseUrl.toString();
      baseUrl = URI.create(base.endsWith("/") ? base : base + "/");
      apiKey = apiKey == null || apiKey.isEmpty() ? null : apiKey;
      headers = Map.copyOf(headers);
    }

    /** A client of the endpoint's origin, for the engines of its models to share. */
    public OriginClient client(Duration timeout) {
      return new OriginClient(baseUrl, timeout, timeout, null);
    }
  }

  final Endpoint endpoint;
  final URI baseUrl;
  final String upstreamModel;
  final Duration timeout;
  final OriginClient client;
  private final boolean ownsClient;

  ProviderEngine(Endpoint endpoint, String upstreamModel, Duration timeout, OriginClient shared) {
    this.endpoint = endpoint;
    this.baseUrl = endpoint.baseUrl();
    this.upstreamModel = upstreamModel == null || upstreamModel.isEmpty() ? null : upstreamModel;
    this.timeout = timeout;
    this.ownsClient = shared == null;
    this.client = shared == null ? endpoint.client(timeout) : shared;
  }

  public URI baseUrl() {
    return baseUrl;
  }

  @Override
  public Optional<URI> origin() {
    return Optional.of(baseUrl);
  }

  /** The model's name at the provider: the deployment's, else the one the request names. */
  String modelOf(GenerationRequest request) {
    return upstreamModel == null ? request.model() : upstreamModel;
  }

  /**
   * The provider's model names: a check that the address, the key and the headers work.
   *
   * @throws EngineException as a generation would fail on the same answer
   */
  public abstract List<String> listModels();

  /** The path and query of a generation. */
  abstract String target(GenerationRequest request);

  /** The headers of a generation (the endpoint's own, then the API's: those win). */
  abstract String[] headers(GenerationRequest request);

  abstract ObjectNode body(GenerationRequest request);

  /** Reads a whole answer, delivering its text to the sink. */
  abstract Generation whole(GenerationRequest request, JsonNode answer, TokenSink sink);

  /** Reads a streamed answer event by event, handing each piece on as it comes. */
  abstract Generation relay(GenerationRequest request, Events events, TokenSink sink)
      throws IOException;

  /** The provider as OpenTelemetry's {@code gen_ai.provider.name} names it. */
  abstract String providerName();

  /**
   * One call to the provider, as a client span (its GenAI attributes, what it answered, how it
   * failed) whose trace context goes with the call.
   */
  @Override
  public Generation generate(GenerationRequest request, TokenSink sink) {
    String model = modelOf(request);
    Span call = called(GenAiSpans.operation(request), model);
    GenAiSpans.asked(call, request, model);
    try (Scope ignored = call.makeCurrent()) {
      Generation generation = exchange(request, sink);
      GenAiSpans.answered(call, generation.finishReason(), generation.usage());
      return generation;
    } catch (RuntimeException e) {
      failed(call, e);
      throw e;
    } finally {
      call.end();
    }
  }

  /** A call's client span: the operation on the model, at the provider's address. */
  private Span called(String operation, String model) {
    Span call = Traces.call(operation + " " + model);
    if (call.isRecording()) {
      call.setAttribute(GenAiSpans.OPERATION, operation);
      call.setAttribute(GenAiSpans.REQUEST_MODEL, model);
      call.setAttribute(GenAiSpans.PROVIDER, providerName());
      call.setAttribute(GenAiSpans.SERVER_ADDRESS, baseUrl.getHost());
      call.setAttribute(GenAiSpans.SERVER_PORT, (long) port(baseUrl));
    }
    return call;
  }

  private static int port(URI url) {
    return url.getPort() != -1 ? url.getPort() : "https".equals(url.getScheme()) ? 443 : 80;
  }

  private static void failed(Span call, RuntimeException e) {
    Traces.failed(
        call,
        e instanceof EngineException failure
            ? failure.failure().code()
            : e.getClass().getName(),
        e.getMessage());
  }

  private Generation exchange(GenerationRequest request, TokenSink sink) {
    try (ClientResponse response =
        send("POST", target(request), headers(request), bytes(body(request)), request.timeout())) {
      InputStream body = response.body();
      if (response.status() != 200) {
        throw UpstreamErrors.fromStatus(
            response.status(), readBounded(body), response.header("Retry-After").orElse(null));
      }
      sink.begin();
      if (request.stream()) {
        sink.onClientGone(response::abort);
        return relay(request, new Events(response, timeoutOf(request)), sink);
      }
      byte[] bytes = body.readNBytes(MAX_WHOLE_BODY + 1);
      if (bytes.length > MAX_WHOLE_BODY) {
        throw malformed("the response is larger than " + MAX_WHOLE_BODY + " bytes");
      }
      return whole(request, parse(new String(bytes, StandardCharsets.UTF_8)), sink);
    } catch (IOException e) {
      throw failed(e, true, timeoutOf(request));
    }
  }

  /**
   * Sends a call, with the failures of getting an answer at all as the gateway's: unreachable,
   * no answer in time, not HTTP.
   */
  ClientResponse send(String method, String target, String[] headers, byte[] body, Duration wait) {
    try {
      return client.send(method, target, Traces.withTraceContext(headers), body, wait);
    } catch (IOException e) {
      throw failed(e, false, wait == null ? timeout : wait);
    }
  }

  /**
   * A call's I/O failure as the gateway's: before the answer began (unreachable, no answer within
   * the wait, not HTTP) or while it was read ({@code reading}: silent too long, cut).
   */
  EngineException failed(IOException e, boolean reading, Duration wait) {
    if (e instanceof UnreachableException) {
      return new EngineException(
          EngineException.Failure.UNAVAILABLE,
          "The upstream at " + baseUrl + " could not be reached",
          null,
          e);
    }
    if (e instanceof SocketTimeoutException) {
      return new EngineException(
          EngineException.Failure.TIMEOUT,
          reading
              ? "The upstream was silent for more than " + wait.toSeconds()
                  + " seconds while answering"
              : "The upstream did not answer within " + wait.toSeconds() + " seconds",
          null,
          e);
    }
    if (e instanceof MalformedResponseException) {
      return malformed(e.getMessage());
    }
    return reading
        ? new EngineException(
            EngineException.Failure.CUT,
            "The upstream connection failed while reading the response: " + e.getMessage(),
            null,
            e)
        : new EngineException(
            EngineException.Failure.UNAVAILABLE,
            "The upstream request failed: " + e.getMessage(),
            null,
            e);
  }

  /** Providers whose API has no embeddings refuse them (a model of such kind is never one). */
  @Override
  public Vectors embed(
      List<String> texts, Integer dimensions, String user, Duration wait, String orgId) {
    throw new EngineException(
        EngineException.Failure.MISCONFIGURED, "This provider's API has no embeddings");
  }

  /** An embeddings call of {@code model}, whose JSON answer is read whole; a client span. */
  JsonNode embeddings(
      String model, String target, String[] headers, ObjectNode body, Duration wait) {
    Span call = called(GenAiSpans.EMBEDDINGS, model);
    try (Scope ignored = call.makeCurrent()) {
      return callJson("POST", target, headers, bytes(body), wait);
    } catch (RuntimeException e) {
      failed(call, e);
      throw e;
    } finally {
      call.end();
    }
  }

  /** A POST whose JSON answer is read whole (a token count), within {@code wait}. */
  JsonNode postJson(String target, String[] headers, ObjectNode body, Duration wait) {
    return callJson("POST", target, headers, bytes(body), wait);
  }

  /** A GET whose JSON answer is read whole (a provider's model list). */
  JsonNode getJson(String target, String[] headers) {
    return callJson("GET", target, headers, new byte[0], null);
  }

  /** A call whose JSON answer is read whole, with the provider's failures as the gateway's. */
  private JsonNode callJson(
      String method, String target, String[] headers, byte[] body, Duration wait) {
    try (ClientResponse response = send(method, target, headers, body, wait)) {
      if (response.status() != 200) {
        throw UpstreamErrors.fromStatus(
            response.status(),
            readBounded(response.body()),
            response.header("Retry-After").orElse(null));
      }
      byte[] bytes = response.body().readNBytes(MAX_WHOLE_BODY + 1);
      if (bytes.length > MAX_WHOLE_BODY) {
        throw malformed("the response is larger than " + MAX_WHOLE_BODY + " bytes");
      }
      return parse(new String(bytes, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw failed(e, true, wait == null ? timeout : wait);
    }
  }

  /** A JSON object sent as a string (a tool call's arguments); an empty one when it is not. */
  static JsonNode object(String json) {
    try {
      JsonNode node = Json.MAPPER.readTree(json);
      return node != null && node.isObject() ? node : Json.MAPPER.createObjectNode();
    } catch (IOException e) {
      return Json.MAPPER.createObjectNode();
    }
  }

  /** A list of numbers as a vector; null when it is not one. */
  static float[] vector(JsonNode values) {
    if (!values.isArray() || values.isEmpty()) {
      return null;
    }
    float[] vector = new float[values.size()];
    for (int i = 0; i < vector.length; i++) {
      if (!values.get(i).isNumber()) {
        return null;
      }
      vector[i] = values.get(i).floatValue();
    }
    return vector;
  }

  /** The endpoint's headers, then these (name, value, ...). */
  String[] headers(String... own) {
    List<String> headers = new ArrayList<>();
    endpoint.headers().forEach((name, value) -> {
      headers.add(name);
      headers.add(value);
    });
    headers.addAll(List.of(own));
    return headers.toArray(String[]::new);
  }

  /** The request's own timeout (its organization's REQUEST_TIMEOUT), else this engine's. */
  Duration timeoutOf(GenerationRequest request) {
    return request.timeout() == null ? timeout : request.timeout();
  }

  /** A stream's server-sent events, read line by line with the request's silence limit. */
  static final class Events {
    private final ClientResponse response;
    private final BufferedReader lines;
    private final Duration silence;

    Events(ClientResponse response, Duration silence) {
      this.response = response;
      this.silence = silence;
      this.lines =
          new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
    }

    /** The next {@code data:} payload, stripped; null at the end of the stream. */
    String nextData() throws IOException {
      String line;
      while ((line = readLine()) != null) {
        if (line.startsWith("data:")) {
          return line.substring(5).strip();
        }
        // comments (keep-alives), event names, blank separators
      }
      return null;
    }

    private String readLine() throws IOException {
      try {
        return lines.readLine();
      } catch (IOException e) {
        if (response.aborted()) {
          throw new ClientGoneException(e);
        }
        if (e instanceof SocketTimeoutException) {
          throw new EngineException(
              EngineException.Failure.TIMEOUT,
              "The upstream stream was silent for more than " + silence.toSeconds() + " seconds",
              null,
              e);
        }
        throw e;
      }
    }
  }

  static byte[] bytes(ObjectNode body) {
    try {
      return Json.MAPPER.writeValueAsBytes(body);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static JsonNode parse(String json) {
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

  static EngineException malformed(String why) {
    return new EngineException(
        EngineException.Failure.MALFORMED,
        "The upstream's response is not one of its API's responses: " + why);
  }

  /** A stream that ended before the model's answer did. */
  static EngineException cut() {
    return new EngineException(
        EngineException.Failure.CUT, "The upstream stream ended before the generation finished");
  }

  static String readBounded(InputStream body) throws IOException {
    return new String(body.readNBytes(MAX_ERROR_BODY), StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    if (ownsClient) {
      client.close();
    }
  }
}
