package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.engram.inference.call.PromptTokens;
import io.engram.inference.engine.ChatMessage;
import io.engram.platform.TokenCounter;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small OpenAI-compatible upstream on loopback, standing in for a model server that cannot run
 * here. It answers chat and text completions, whole or streamed, and misbehaves on request: the
 * test sets a {@link Script}, or a message says {@code [upstream:NAME]} (for clients outside the JVM).
 * It records every request body and counts streams finished and streams abandoned by the gateway.
 */
public final class FakeUpstream implements AutoCloseable {
  private static final Pattern DIRECTIVE = Pattern.compile("\\[upstream:([a-z0-9-]+)]");

  /** How to answer. {@code cutAfter}: chunks sent before the connection is dropped (-1: never). */
  public record Script(
      int status,
      List<String> pieces,
      long headerDelayMillis,
      long pieceIntervalMillis,
      int cutAfter,
      String finishReason,
      String errorBody,
      String retryAfter) {
    public static final Script NORMAL = new Script(
        200, List.of("Hello", " from", " the", " upstream", "."), 0, 0, -1, "stop", null, null);

    public Script pieces(String... text) {
      return new Script(
          status,
          List.of(text),
          headerDelayMillis,
          pieceIntervalMillis,
          cutAfter,
          finishReason,
          errorBody,
          retryAfter);
    }

    public Script interval(long millis) {
      return new Script(
          status, pieces, headerDelayMillis, millis, cutAfter, finishReason, errorBody, retryAfter);
    }

    public Script headerDelay(long millis) {
      return new Script(
          status,
          pieces,
          millis,
          pieceIntervalMillis,
          cutAfter,
          finishReason,
          errorBody,
          retryAfter);
    }

    public Script cutAfter(int chunks) {
      return new Script(
          status,
          pieces,
          headerDelayMillis,
          pieceIntervalMillis,
          chunks,
          finishReason,
          errorBody,
          retryAfter);
    }

    public static Script error(int status, String body, String retryAfter) {
      return new Script(status, List.of(), 0, 0, -1, "stop", body, retryAfter);
    }

    /** The scripts a message can ask for by name. */
    public static Script named(String name) {
      return switch (name) {
        case "slow" -> NORMAL.interval(200);
        case "endless" -> NORMAL.pieces(words(2000)).interval(20);
        case "cut" -> NORMAL.cutAfter(2);
        case "500" ->
          error(
              500,
              "{\"error\":{\"message\":\"upstream exploded\",\"type\":\"server_error\"}}",
              null);
        case "429" ->
          error(429, "{\"error\":{\"message\":\"slow down\",\"type\":\"rate_limit_error\"}}", "7");
        case "400" ->
          error(
              400,
              "{\"error\":{\"message\":\"bad things\",\"type\":\"invalid_request_error\"}}",
              null);
        default -> NORMAL;
      };
    }

    private static String[] words(int count) {
      String[] words = new String[count];
      for (int i = 0; i < count; i++) {
        words[i] = " word" + i;
      }
      return words;
    }
  }

  private final HttpServer server;
  private final List<JsonNode> requests = new CopyOnWriteArrayList<>();
  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private final List<String> traceParents = new CopyOnWriteArrayList<>();
  private final AtomicInteger streamsFinished = new AtomicInteger();
  private final AtomicInteger streamsAbandoned = new AtomicInteger();
  private final AtomicInteger inFlight = new AtomicInteger();
  private volatile Script script = Script.NORMAL;
  private volatile boolean parrot;
  private volatile double promptCharge;

  public FakeUpstream() {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/v1/chat/completions", exchange -> answer(exchange, true));
    server.createContext("/v1/completions", exchange -> answer(exchange, false));
    server.createContext("/v1/models", this::models);
    server.createContext("/v1/embeddings", this::embeddings);
    server.start();
  }

  /** OpenAI's embeddings: the scripted error, or a 3-number vector per input (its index first). */
  private void embeddings(HttpExchange exchange) throws IOException {
    try (exchange) {
      JsonNode body = Json.MAPPER.readTree(exchange.getRequestBody());
      requests.add(body);
      traceParent(exchange);
      Script current = script;
      if (current.status() != 200) {
        send(exchange, current.status(), current.errorBody() == null ? "" : current.errorBody());
        return;
      }
      ObjectNode answer = Json.MAPPER.createObjectNode().put("object", "list");
      var data = answer.putArray("data");
      JsonNode inputs = body.path("input");
      for (int i = 0; i < inputs.size(); i++) {
        data.addObject()
            .put("object", "embedding")
            .put("index", i)
            .putArray("embedding")
            .add(i)
            .add(0.5)
            .add(-0.25);
      }
      answer.put("model", body.path("model").asText());
      answer
          .putObject("usage")
          .put("prompt_tokens", 7 * inputs.size())
          .put("total_tokens", 7 * inputs.size());
      send(exchange, 200, Json.write(answer));
    }
  }

  /** OpenAI's model list: the scripted error, or one model. */
  private void models(HttpExchange exchange) throws IOException {
    try (exchange) {
      String auth = exchange.getRequestHeaders().getFirst("Authorization");
      authorizations.add(auth == null ? "" : auth);
      Script current = script;
      if (current.status() != 200) {
        send(exchange, current.status(), current.errorBody() == null ? "" : current.errorBody());
        return;
      }
      send(
          exchange,
          200,
          "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\","
              + "\"object\":\"model\",\"created\":0,\"owned_by\":\"fake\"}]}");
    }
  }

  /** Serves OpenAI's files and fine-tuning routes too, from now on. */
  public FakeFineTuningApi fineTuning() {
    return FakeFineTuningApi.on(server);
  }

  /** The base URL including /v1, as ENGRAM_UPSTREAM_URL takes it. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  public void script(Script next) {
    this.script = next;
  }

  /**
   * A model that answers every chat with the first memory of its memory block (or "I do not
   * know." without one): the worst case for uses that feed on themselves.
   */
  public void parrotMemory(boolean on) {
    this.parrot = on;
  }

  private static String parroted(JsonNode body) {
    for (JsonNode message : body.path("messages")) {
      String content = message.path("content").asText("");
      if (message.path("role").asText().equals("system") && content.startsWith("<memory>")) {
        for (String line : content.split("\n")) {
          if (line.startsWith("- [") && line.contains("] ")) {
            return line.substring(line.indexOf("] ") + 2);
          }
        }
      }
    }
    return "I do not know.";
  }

  /**
   * Charges every prompt {@code ratio} times what the gateway counts for it (0: a word a token),
   * rounded up, as a provider whose tokenizer counts more than cl100k_base does.
   */
  public void chargePromptsAt(double ratio) {
    this.promptCharge = ratio;
  }

  /** A chat's messages or a completion's prompt as the gateway counts them, times {@code ratio}. */
  private static int charged(JsonNode body, double ratio) {
    List<ChatMessage> messages = new java.util.ArrayList<>();
    body.path("messages")
        .forEach(m -> messages.add(
            new ChatMessage(m.path("role").asText(), m.path("content").asText())));
    int counted = body.has("messages")
        ? PromptTokens.chat(messages)
        : TokenCounter.count(body.path("prompt").asText(""));
    return (int) Math.ceil(counted * ratio);
  }

  public List<JsonNode> requests() {
    return List.copyOf(requests);
  }

  public JsonNode lastRequest() {
    return requests.getLast();
  }

  private void traceParent(HttpExchange exchange) {
    String header = exchange.getRequestHeaders().getFirst("traceparent");
    traceParents.add(header == null ? "" : header);
  }

  /** The W3C traceparent header of each generation and embeddings call ("" when it had none). */
  public List<String> traceParents() {
    return List.copyOf(traceParents);
  }

  public List<String> authorizations() {
    return List.copyOf(authorizations);
  }

  public int streamsFinished() {
    return streamsFinished.get();
  }

  public int streamsAbandoned() {
    return streamsAbandoned.get();
  }

  public int inFlight() {
    return inFlight.get();
  }

  private void answer(HttpExchange exchange, boolean chat) throws IOException {
    inFlight.incrementAndGet();
    try (exchange) {
      JsonNode body = Json.MAPPER.readTree(exchange.getRequestBody());
      requests.add(body);
      traceParent(exchange);
      String auth = exchange.getRequestHeaders().getFirst("Authorization");
      authorizations.add(auth == null ? "" : auth);
      Script current = directive(body).orElse(script);
      if (parrot && chat) {
        current = current.pieces(parroted(body));
      }
      sleep(current.headerDelayMillis());
      if (current.status() != 200) {
        if (current.retryAfter() != null) {
          exchange.getResponseHeaders().add("Retry-After", current.retryAfter());
        }
        send(exchange, current.status(), current.errorBody() == null ? "" : current.errorBody());
        return;
      }
      String model = body.path("model").asText();
      int promptTokens = promptCharge > 0 ? charged(body, promptCharge) : words(body);
      if (chat && callsATool(body)) {
        answerWithToolCall(exchange, body, model, promptTokens);
        return;
      }
      FakeChoices choices = chat ? FakeChoices.of(body, current.pieces()) : null;
      if (choices != null) {
        answerWithChoices(exchange, body, choices, model, promptTokens);
        return;
      }
      if (body.path("stream").asBoolean(false)) {
        stream(
            exchange,
            current,
            chat,
            model,
            promptTokens,
            body.path("stream_options").path("include_usage").asBoolean(false));
      } else {
        sleep(current.pieceIntervalMillis()
            * current.pieces().size()); // as long as generating the pieces
        send(exchange, 200, Json.write(whole(asked(current, body), chat, model, promptTokens)));
      }
    } finally {
      inFlight.decrementAndGet();
    }
  }

  /**
   * Offered tools and not yet answered by one, the fake calls the first tool, as a model that
   * decides to would: {@code {"city": "Lyon"}} as its arguments, streamed in three pieces.
   */
  private static boolean callsATool(JsonNode body) {
    JsonNode messages = body.path("messages");
    JsonNode last = messages.path(messages.size() - 1);
    if (!"none".equals(body.path("tool_choice").asText()) && callsEveryStep(messages)) {
      return true;
    }
    boolean asked = body.path("tools").size() > 0
        // A [call:...] directive makes the fake call that tool even when none is offered, as a
        // model that makes a name up would.
        || (last.path("role").asText().equals("user")
            && CALL.matcher(last.path("content").asText("")).find());
    return asked
        && !"none".equals(body.path("tool_choice").asText())
        && !"tool".equals(last.path("role").asText());
  }

  /**
   * Which tool the fake calls: a user message's {@code [call:NAME ARGS]} (or {@code
   * [call#ID:NAME ARGS]} to fix the call's id, {@code [call*:NAME ARGS]} to call it at every step
   * until told {@code tool_choice: none}) names it and its JSON arguments; otherwise the
   * first tool, with {@code {"city": "Lyon"}}. Named calls get a fresh id each time, as a model's do.
   */
  private record PlannedCall(String id, String name, String arguments) {}

  private static final Pattern CALL =
      Pattern.compile("\\[call(?:#([A-Za-z0-9_-]+))?(\\*?):([a-z_]+) (\\{.*})]");
  private final AtomicInteger callIds = new AtomicInteger();

  /** {@code [call*:...]} in the last user message: the fake calls again after every result. */
  private static boolean callsEveryStep(JsonNode messages) {
    for (int i = messages.size() - 1; i >= 0; i--) {
      if (messages.get(i).path("role").asText().equals("user")) {
        Matcher matcher = CALL.matcher(messages.get(i).path("content").asText(""));
        return matcher.find() && !matcher.group(2).isEmpty();
      }
    }
    return false;
  }

  private PlannedCall plannedCall(JsonNode body) {
    JsonNode messages = body.path("messages");
    for (int i = messages.size() - 1; i >= 0; i--) {
      if (messages.get(i).path("role").asText().equals("user")) {
        Matcher matcher = CALL.matcher(messages.get(i).path("content").asText(""));
        if (matcher.find()) {
          String id =
              matcher.group(1) != null ? matcher.group(1) : "call_n" + callIds.incrementAndGet();
          return new PlannedCall(id, matcher.group(3), matcher.group(4));
        }
        break;
      }
    }
    return new PlannedCall(
        "call_1",
        body.path("tools").path(0).path("function").path("name").asText(),
        "{\"city\":\"Lyon\"}");
  }

  private void answerWithToolCall(
      HttpExchange exchange, JsonNode body, String model, int promptTokens) throws IOException {
    PlannedCall planned = plannedCall(body);
    String name = planned.name();
    String arguments = planned.arguments();
    if (!body.path("stream").asBoolean(false)) {
      ObjectNode reply = whole(Script.NORMAL.pieces(new String[0]), true, model, promptTokens);
      ObjectNode choice = (ObjectNode) reply.path("choices").path(0);
      ObjectNode message = (ObjectNode) choice.path("message");
      message.putNull("content");
      ObjectNode call = message.putArray("tool_calls").addObject();
      call.put("id", planned.id()).put("type", "function");
      call.putObject("function").put("name", name).put("arguments", arguments);
      choice.put("finish_reason", "tool_calls");
      send(exchange, 200, Json.write(reply));
      return;
    }
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    int half = arguments.length() / 2;
    String[] parts = {"", arguments.substring(0, half), arguments.substring(half)};
    for (int i = 0; i < parts.length; i++) {
      ObjectNode chunk = chunkHead(model);
      ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
      ObjectNode delta = choice.putObject("delta");
      ObjectNode call = delta.putArray("tool_calls").addObject().put("index", 0);
      if (i == 0) {
        delta.put("role", "assistant");
        call.put("id", planned.id()).put("type", "function");
        call.putObject("function").put("name", name).put("arguments", "");
      } else {
        call.putObject("function").put("arguments", parts[i]);
      }
      choice.putNull("finish_reason");
      write(out, Json.write(chunk));
    }
    write(out, chunk(true, model, "", "tool_calls", false));
    write(out, "[DONE]");
    out.close();
    streamsFinished.incrementAndGet();
  }

  private void answerWithChoices(
      HttpExchange exchange, JsonNode body, FakeChoices choices, String model, int promptTokens)
      throws IOException {
    ObjectNode usage = Json.MAPPER
        .createObjectNode()
        .put("prompt_tokens", promptTokens)
        .put("completion_tokens", choices.completionTokens())
        .put("total_tokens", promptTokens + choices.completionTokens());
    if (!body.path("stream").asBoolean(false)) {
      ObjectNode reply = whole(Script.NORMAL.pieces(new String[0]), true, model, promptTokens);
      choices.whole(reply.putArray("choices"));
      reply.set("usage", usage);
      send(exchange, 200, Json.write(reply));
      return;
    }
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    for (ObjectNode choice : choices.chunks()) {
      ObjectNode chunk = chunkHead(model);
      chunk.putArray("choices").add(choice);
      write(out, Json.write(chunk));
    }
    if (body.path("stream_options").path("include_usage").asBoolean(false)) {
      ObjectNode last = chunkHead(model);
      last.putArray("choices");
      write(out, Json.write(last.set("usage", usage)));
    }
    write(out, "[DONE]");
    out.close();
    streamsFinished.incrementAndGet();
  }

  private static ObjectNode chunkHead(String model) {
    return Json.MAPPER
        .createObjectNode()
        .put("id", "up-1")
        .put("object", "chat.completion.chunk")
        .put("created", 1)
        .put("model", model);
  }

  /**
   * Asked for JSON ({@code response_format} json_object or json_schema), the fake answers
   * {@code {"answer": "<its text>"}}, which a schema with a string {@code answer} accepts.
   */
  private static Script asked(Script script, JsonNode body) {
    String format = body.path("response_format").path("type").asText();
    if (!format.equals("json_object") && !format.equals("json_schema")) {
      return script;
    }
    String text = String.join("", script.pieces());
    return script.pieces(Json.write(Json.MAPPER.createObjectNode().put("answer", text)));
  }

  private static Optional<Script> directive(JsonNode body) {
    String text = body.has("messages")
        ? body.path("messages").toString()
        : body.path("prompt").asText("");
    Matcher matcher = DIRECTIVE.matcher(text);
    return matcher.find() ? Optional.of(Script.named(matcher.group(1))) : Optional.empty();
  }

  /** This fake's token count: the words of the prompt, so a longer prompt costs more. */
  static int words(JsonNode body) {
    StringBuilder text = new StringBuilder(body.path("prompt").asText(""));
    body.path("messages").forEach(m -> text.append(' ').append(m.path("content").asText("")));
    String trimmed = text.toString().strip();
    return trimmed.isEmpty() ? 0 : trimmed.split("\\s+").length;
  }

  private static ObjectNode whole(Script script, boolean chat, String model, int promptTokens) {
    ObjectNode reply = Json.MAPPER.createObjectNode();
    reply
        .put("id", "up-1")
        .put("object", chat ? "chat.completion" : "text_completion")
        .put("created", 1)
        .put("model", model);
    ObjectNode choice = reply.putArray("choices").addObject().put("index", 0);
    String text = String.join("", script.pieces());
    if (chat) {
      choice.putObject("message").put("role", "assistant").put("content", text);
    } else {
      choice.put("text", text);
    }
    choice.put("finish_reason", script.finishReason());
    reply
        .putObject("usage")
        .put("prompt_tokens", promptTokens)
        .put("completion_tokens", script.pieces().size())
        .put("total_tokens", promptTokens + script.pieces().size());
    return reply;
  }

  private void stream(
      HttpExchange exchange,
      Script script,
      boolean chat,
      String model,
      int promptTokens,
      boolean includeUsage)
      throws IOException {
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    out.flush(); // the headers go out now, as a streaming server's do, before the first token
    try {
      int sent = 0;
      for (String piece : script.pieces()) {
        if (sent == script.cutAfter()) {
          // Ended mid-stream with neither a finish reason nor [DONE], as a crashed model server
          // would.
          out.close();
          return;
        }
        sleep(script.pieceIntervalMillis());
        write(out, chunk(chat, model, piece, null, sent == 0));
        sent++;
      }
      write(out, chunk(chat, model, "", script.finishReason(), false));
      if (includeUsage) {
        write(
            out,
            "{\"id\":\"up-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\""
                + model
                + "\",\"choices\":[],\"usage\":{\"prompt_tokens\":" + promptTokens
                + ",\"completion_tokens\":"
                + script.pieces().size() + ",\"total_tokens\":"
                + (promptTokens + script.pieces().size()) + "}}");
      }
      write(out, "[DONE]");
      streamsFinished.incrementAndGet();
    } catch (IOException e) {
      streamsAbandoned.incrementAndGet();
      throw e;
    }
  }

  private static String chunk(
      boolean chat, String model, String piece, String finishReason, boolean first) {
    ObjectNode chunk = Json.MAPPER.createObjectNode();
    chunk
        .put("id", "up-1")
        .put("object", chat ? "chat.completion.chunk" : "text_completion")
        .put("created", 1)
        .put("model", model);
    ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
    if (chat) {
      ObjectNode delta = choice.putObject("delta");
      if (first) {
        delta.put("role", "assistant");
      }
      if (finishReason == null) {
        delta.put("content", piece);
      }
    } else {
      choice.put("text", piece);
    }
    choice.put("finish_reason", finishReason);
    return Json.write(chunk);
  }

  private static void write(OutputStream out, String data) throws IOException {
    out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private static void send(HttpExchange exchange, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      exchange.getResponseBody().write(bytes);
    }
  }

  private static void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
