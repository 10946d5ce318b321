package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorResponses;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /v1/messages}: Anthropic's Messages API in front of any model, so clients written
 * for Anthropic's SDK use Engram unchanged (their key as {@code x-api-key}, or a bearer token),
 * inside the organization's memory as a chat is. The request becomes a chat ({@link
 * MessagesRequest}); the answer comes back as Anthropic's message, whole or as its named events
 * ({@code message_start}, {@code content_block_start}/{@code _delta}/{@code _stop}, {@code
 * message_delta}, {@code message_stop}); errors in Anthropic's shape.
 */
final class MessagesRoutes implements RouteModule {
  private static final Logger LOG = LoggerFactory.getLogger(MessagesRoutes.class);
  static final String COUNT_TOKENS = "/v1/messages/count_tokens";
  /** Who counted: {@code provider} (the model's provider's API) or {@code gateway}. */
  static final String COUNTED_BY = "X-Engram-Token-Count";

  private final Gateway gateway;
  private final long maxBodyBytes;
  private final KeepAlives keepAlives;
  private final Clock clock;

  MessagesRoutes(Gateway gateway, long maxBodyBytes, KeepAlives keepAlives, Clock clock) {
    this.gateway = gateway;
    this.maxBodyBytes = maxBodyBytes;
    this.keepAlives = keepAlives;
    this.clock = clock;
  }

  @Override
  public void register(Routes routes) {
    routes.exposeHeaders(COUNTED_BY);
    routes.post("/v1/messages", Requires.runsModel(), this::create);
    routes.post(COUNT_TOKENS, Requires.inference(), this::countTokens);
  }

  /**
   * Anthropic's token count: {@code {"input_tokens": n}}, by the provider of the deployment the
   * model would go to where its API counts, else by the gateway; {@value #COUNTED_BY} says which.
   */
  private void countTokens(Context ctx) {
    Principal caller = Access.caller(ctx);
    ChatRequest chat = MessagesRequest.parseCounted(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    TokenCount count;
    try {
      count = gateway.countTokens(caller, chat);
    } catch (EngineException e) {
      throw e.toApiException();
    }
    ctx.header(COUNTED_BY, count.countedBy());
    Responses.json(ctx, Map.of("input_tokens", count.inputTokens()));
  }

  private void create(Context ctx) {
    Principal caller = Access.caller(ctx);
    ChatRequest chat = MessagesRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    AgentScope scope = AgentBoundary.of(ctx, caller, "agentSlug", "/v1/messages");
    try (ModelCall prepared = GenerationRoutes.prepared(ctx, gateway, caller, scope, chat, null)) {
      TokenHeaders.write(ctx, prepared.budget());
      String id = Ids.newId("msg", clock.millis());
      String model = prepared.model().card().id();
      if (chat.stream()) {
        stream(ctx, caller, prepared, id, model);
        return;
      }
      Outcome outcome;
      try {
        outcome = gateway.generate(prepared, DeploymentHeaders.around(ctx, Quiet.SINK));
      } catch (EngineException e) {
        throw e.toApiException();
      } finally {
        GenerationRoutes.guardrailsHeader(ctx, prepared); // with the answer's, once screened
      }
      ObjectNode message = message(id, model);
      ArrayNode content = message.putArray("content");
      Generation generation = outcome.generation();
      if (generation.text() != null && !generation.text().isEmpty()) {
        content.addObject().put("type", "text").put("text", generation.text());
      }
      if (generation.toolCalls() != null) {
        for (JsonNode call : generation.toolCalls()) {
          content
              .addObject()
              .put("type", "tool_use")
              .put("id", call.path("id").asText())
              .put("name", call.path("function").path("name").asText())
              .set("input", input(call.path("function").path("arguments").asText("{}")));
        }
      }
      message.put("stop_reason", stopReason(generation.finishReason()));
      message.putNull("stop_sequence");
      message.set("usage", usage(outcome.usage(), prepared.memoryTokens()));
      Responses.json(ctx, message);
    }
  }

  private void stream(Context ctx, Principal caller, ModelCall prepared, String id, String model) {
    try (EventStream events = new EventStream(ctx, keepAlives)) {
      MessageStream sink = new MessageStream(events, message(id, model), prepared.promptTokens());
      try {
        Outcome outcome = gateway.generate(prepared, DeploymentHeaders.around(ctx, sink));
        sink.complete(
            outcome.generation().finishReason(), outcome.usage(), prepared.memoryTokens());
      } catch (ClientGoneException e) {
        LOG.debug("client left during a message stream; generation stopped");
      } catch (EngineException e) {
        failIn(events, sink, e.toApiException());
      } catch (ApiException e) {
        failIn(events, sink, e);
      } catch (RuntimeException e) {
        if (events.isOpen()) {
          LOG.error("unexpected failure during a message stream", e);
        }
        failIn(events, sink, ApiException.internal());
      }
    }
  }

  private static void failIn(EventStream events, MessageStream sink, ApiException e) {
    if (!events.isOpen()) {
      throw e;
    }
    LOG.warn("message stream failed: {}", e.getMessage());
    sink.fail(e);
  }

  private static ObjectNode message(String id, String model) {
    return Json.MAPPER
        .createObjectNode()
        .put("id", id)
        .put("type", "message")
        .put("role", "assistant")
        .put("model", model);
  }

  private static JsonNode input(String arguments) {
    try {
      JsonNode input = Json.MAPPER.readTree(arguments);
      return input != null && input.isObject() ? input : Json.MAPPER.createObjectNode();
    } catch (java.io.IOException e) {
      return Json.MAPPER.createObjectNode();
    }
  }

  /** OpenAI's finish reasons in Anthropic's words. */
  static String stopReason(String finishReason) {
    if (finishReason == null) {
      return "end_turn";
    }
    return switch (finishReason) {
      case Generation.LENGTH -> "max_tokens";
      case "tool_calls" -> "tool_use";
      case "content_filter" -> "refusal";
      default -> "end_turn";
    };
  }

  private static ObjectNode usage(Generation.Usage usage, int memoryTokens) {
    return Json.MAPPER
        .createObjectNode()
        .put("input_tokens", usage.promptTokens())
        .put("output_tokens", usage.completionTokens())
        .put("memory_tokens", memoryTokens);
  }

  /** A whole message's sink: the answer is read from the generation once it ends. */
  private enum Quiet implements TokenSink {
    SINK;

    @Override
    public void begin() {}

    @Override
    public void text(String piece) {}
  }

  /** The answer as Anthropic's stream of named events, each piece sent as it comes. */
  private static final class MessageStream implements TokenSink {
    private final EventStream events;
    private final ObjectNode message;
    private final int promptTokens;
    private final Map<Integer, Integer> blockOfCall = new HashMap<>();
    private int blocks;
    private int open = -1;
    private boolean textOpen;

    MessageStream(EventStream events, ObjectNode message, int promptTokens) {
      this.events = events;
      this.message = message;
      this.promptTokens = promptTokens;
    }

    private void send(String type, ObjectNode data) {
      data.put("type", type);
      events.event(type, Json.write(data));
    }

    @Override
    public void begin() {
      events.open();
      ObjectNode start = message.deepCopy();
      start.putArray("content");
      start.putNull("stop_reason");
      start.putNull("stop_sequence");
      start.putObject("usage").put("input_tokens", promptTokens).put("output_tokens", 0);
      send("message_start", Json.MAPPER.createObjectNode().set("message", start));
    }

    @Override
    public void text(String piece) {
      if (!textOpen) {
        closeBlock();
        open = blocks++;
        textOpen = true;
        ObjectNode block = Json.MAPPER.createObjectNode().put("type", "text").put("text", "");
        send(
            "content_block_start",
            Json.MAPPER.createObjectNode().put("index", open).set("content_block", block));
      }
      ObjectNode delta =
          Json.MAPPER.createObjectNode().put("type", "text_delta").put("text", piece);
      send(
          "content_block_delta",
          Json.MAPPER.createObjectNode().put("index", open).set("delta", delta));
    }

    @Override
    public void toolCalls(JsonNode deltas) {
      for (JsonNode delta : deltas) {
        int call = delta.path("index").asInt(0);
        Integer block = blockOfCall.get(call);
        if (block == null) {
          closeBlock();
          block = blocks++;
          blockOfCall.put(call, block);
          open = block;
          textOpen = false;
          ObjectNode started = Json.MAPPER
              .createObjectNode()
              .put("type", "tool_use")
              .put("id", delta.path("id").asText())
              .put("name", delta.path("function").path("name").asText());
          started.putObject("input");
          send(
              "content_block_start",
              Json.MAPPER.createObjectNode().put("index", block).set("content_block", started));
        }
        String arguments = delta.path("function").path("arguments").asText("");
        if (!arguments.isEmpty()) {
          ObjectNode piece = Json.MAPPER
              .createObjectNode()
              .put("type", "input_json_delta")
              .put("partial_json", arguments);
          send(
              "content_block_delta",
              Json.MAPPER.createObjectNode().put("index", block).set("delta", piece));
        }
      }
    }

    private void closeBlock() {
      if (open >= 0) {
        send("content_block_stop", Json.MAPPER.createObjectNode().put("index", open));
        open = -1;
        textOpen = false;
      }
    }

    void complete(String finishReason, Generation.Usage usage, int memoryTokens) {
      closeBlock();
      ObjectNode end = Json.MAPPER.createObjectNode();
      end.putObject("delta").put("stop_reason", stopReason(finishReason)).putNull("stop_sequence");
      end.set("usage", usage(usage, memoryTokens));
      send("message_delta", end);
      send("message_stop", Json.MAPPER.createObjectNode());
    }

    void fail(ApiException e) {
      events.event("error", Json.write(ErrorResponses.anthropicBody(e)));
    }
  }
}
