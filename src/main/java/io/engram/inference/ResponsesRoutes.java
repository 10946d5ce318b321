package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Access;
import io.engram.access.Principal;
import io.engram.access.Requires;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.TokenSink;
import io.engram.memory.AgentBoundary;
import io.engram.memory.AgentScope;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorResponses;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.engram.platform.json.Json;
import io.javalin.http.Context;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OpenAI's Responses API over the same gateway as chat: {@code POST /v1/responses} (whole or
 * streamed as typed events), {@code GET} and {@code DELETE /v1/responses/{id}}. A response runs
 * inside the organization's memory as a chat does, and, stored (the default), carries its
 * conversation to the next request that names it as {@code previous_response_id}.
 */
public final class ResponsesRoutes implements RouteModule {
  private static final Logger LOG = LoggerFactory.getLogger(ResponsesRoutes.class);

  private final Gateway gateway;
  private final ResponseStore store;
  private final long maxBodyBytes;
  private final KeepAlives keepAlives;
  private final Clock clock;

  ResponsesRoutes(
      Gateway gateway, ResponseStore store, long maxBodyBytes, KeepAlives keepAlives, Clock clock) {
    this.gateway = gateway;
    this.store = store;
    this.maxBodyBytes = maxBodyBytes;
    this.keepAlives = keepAlives;
    this.clock = clock;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post("/v1/responses", Requires.runsModel(), this::create)
        .get("/v1/responses/{response_id}", Requires.inference(), ctx -> {
          Principal caller = Access.caller(ctx);
          Responses.json(
              ctx,
              store
                  .response(caller.orgId(), ctx.pathParam("response_id"))
                  .orElseThrow(() -> notFound("response_id", ctx.pathParam("response_id"))));
        })
        .delete("/v1/responses/{response_id}", Requires.inference(), ctx -> {
          Principal caller = Access.caller(ctx);
          String id = ctx.pathParam("response_id");
          if (!store.delete(caller.orgId(), id)) {
            throw notFound("response_id", id);
          }
          Responses.json(ctx, Map.of("id", id, "object", "response", "deleted", true));
        });
  }

  private static ApiException notFound(String param, String id) {
    return ApiException.notFound("response_not_found", param, "No response " + id);
  }

  private void create(Context ctx) {
    Principal caller = Access.caller(ctx);
    ResponsesRequest request = ResponsesRequest.parse(JsonBody.parseOpenAi(ctx, maxBodyBytes));
    List<ChatMessage> earlier = request.previousResponseId() == null
        ? List.of()
        : store
            .conversation(caller.orgId(), request.previousResponseId())
            .orElseThrow(() -> notFound("previous_response_id", request.previousResponseId()));
    List<ChatMessage> conversation = new ArrayList<>(earlier);
    conversation.addAll(request.input());
    List<ChatMessage> messages = new ArrayList<>();
    if (request.instructions() != null) {
      messages.add(new ChatMessage(ChatMessage.SYSTEM, request.instructions()));
    }
    messages.addAll(conversation);
    ChatRequest chat = new ChatRequest(
        request.model(),
        List.copyOf(messages),
        request.sampling(),
        request.stream(),
        false,
        request.user(),
        request.memory(),
        request.tooling(),
        null);
    AgentScope scope = AgentBoundary.of(ctx, caller, "agentSlug", "/v1/responses");
    ModelCall call;
    try {
      call = GenerationRoutes.prepared(ctx, gateway, caller, scope, chat, null);
    } catch (ApiException refused) {
      // Refused as the chat it became: named as the client sent it (text.format, not
      // response_format).
      throw refused.renamed(ResponsesRequest.AS_SENT);
    }
    try (ModelCall prepared = call) {
      TokenHeaders.write(ctx, prepared.budget());
      ResponseObjects.Ids ids =
          ResponseObjects.Ids.create(prepared.model().card().id());
      if (request.stream()) {
        stream(ctx, caller, prepared, request, ids, conversation);
      } else {
        Outcome outcome;
        try {
          outcome = gateway.generate(prepared, DeploymentHeaders.around(ctx, Quiet.INSTANCE));
        } catch (EngineException e) {
          LOG.warn("generation failed: {}", e.getMessage());
          throw e.toApiException();
        } finally {
          GenerationRoutes.guardrailsHeader(ctx, prepared); // with the answer's, once screened
        }
        Responses.json(
            ctx,
            finish(
                caller,
                request,
                ids,
                conversation,
                prepared,
                outcome,
                ResponseObjects.functionCalls(outcome.generation().toolCalls())));
      }
    }
  }

  /**
   * The completed response, stored when asked (the default) with its whole conversation: the
   * answer's text, or its function calls as the assistant's tool calls (which the next request's
   * function_call_output items answer).
   */
  private ObjectNode finish(
      Principal caller,
      ResponsesRequest request,
      ResponseObjects.Ids ids,
      List<ChatMessage> conversation,
      ModelCall prepared,
      Outcome outcome,
      List<ObjectNode> calls) {
    String text = outcome.generation().text();
    ObjectNode response = ResponseObjects.response(
        ids, request, "completed", text, calls, outcome.usage(), prepared.memoryTokens());
    if (request.store()) {
      List<ChatMessage> after = new ArrayList<>(conversation);
      after.add(
          calls.isEmpty()
              ? new ChatMessage(ChatMessage.ASSISTANT, text)
              : new ChatMessage(
                  ChatMessage.ASSISTANT, text.isEmpty() ? null : text, toolCalls(calls)));
      store.save(
          caller.orgId(),
          caller.credentialId(),
          prepared.origin().endUser(),
          ids.response(),
          after,
          response,
          clock.instant());
    }
    return response;
  }

  private static ObjectNode toolCalls(List<ObjectNode> calls) {
    ObjectNode tooling = Json.MAPPER.createObjectNode();
    var array = tooling.putArray("tool_calls");
    for (ObjectNode call : calls) {
      ObjectNode chat =
          array.addObject().put("id", call.get("call_id").asText()).put("type", "function");
      chat.putObject("function")
          .put("name", call.get("name").asText())
          .put("arguments", call.get("arguments").asText());
    }
    return tooling;
  }

  private void stream(
      Context ctx,
      Principal caller,
      ModelCall prepared,
      ResponsesRequest request,
      ResponseObjects.Ids ids,
      List<ChatMessage> conversation) {
    try (EventStream events = new EventStream(ctx, keepAlives)) {
      ResponseStream sink = new ResponseStream(events, ids, request);
      try {
        Outcome outcome = gateway.generate(prepared, DeploymentHeaders.around(ctx, sink));
        sink.complete(finish(caller, request, ids, conversation, prepared, outcome, sink.calls()));
      } catch (ClientGoneException e) {
        LOG.debug("client left during a response stream; generation stopped");
      } catch (EngineException e) {
        if (!events.isOpen()) {
          throw e.toApiException();
        }
        sink.fail(e.toApiException());
      } catch (RuntimeException e) {
        if (!events.isOpen()) {
          throw e;
        }
        LOG.error("unexpected failure during a response stream", e);
        sink.fail(ApiException.internal());
      }
    }
  }

  /**
   * The Responses API's typed events for one response: created and in progress; the message item
   * and its text part added when the first text arrives, a delta per piece; a function_call item
   * added when the model starts a call, its arguments as deltas; then every item done, in output
   * order, and completed. Items take output indexes in the order they start, as OpenAI numbers
   * them.
   */
  private static final class ResponseStream implements TokenSink {
    private final EventStream events;
    private final ResponseObjects.Ids ids;
    private final ResponsesRequest request;
    private final StringBuilder text = new StringBuilder();
    /** The function calls being streamed, by the model's call index. */
    private final Map<Integer, ObjectNode> calls = new TreeMap<>();
    /** Each call's output index, by the model's call index. */
    private final Map<Integer, Integer> callIndexes = new HashMap<>();

    private int messageIndex = -1;
    private int nextIndex;
    private int sequence;

    ResponseStream(EventStream events, ResponseObjects.Ids ids, ResponsesRequest request) {
      this.events = events;
      this.ids = ids;
      this.request = request;
    }

    private void send(ObjectNode event) {
      events.event(event.get("type").asText(), Json.write(event));
    }

    private ObjectNode event(String type) {
      return ResponseObjects.event(type, sequence++);
    }

    private ObjectNode textEvent(String type) {
      return event(type)
          .put("item_id", ids.message())
          .put("output_index", messageIndex)
          .put("content_index", 0);
    }

    @Override
    public void begin() {
      events.open();
      ObjectNode inProgress =
          ResponseObjects.response(ids, request, "in_progress", null, List.of(), null, 0);
      send(event("response.created").set("response", inProgress));
      send(event("response.in_progress").set("response", inProgress));
    }

    private void openMessage() {
      messageIndex = nextIndex++;
      send(event("response.output_item.added")
          .put("output_index", messageIndex)
          .set("item", ResponseObjects.message(ids, null, "in_progress")));
      send(textEvent("response.content_part.added").set("part", ResponseObjects.part("")));
    }

    @Override
    public void text(String piece) {
      if (messageIndex < 0) {
        openMessage();
      }
      text.append(piece);
      send(textEvent("response.output_text.delta").put("delta", piece));
    }

    /**
     * Tool-call deltas become function-call items: added when a call starts, then its arguments
     * as function_call_arguments deltas.
     */
    @Override
    public void toolCalls(JsonNode deltas) {
      for (JsonNode delta : deltas) {
        int index = delta.path("index").asInt(0);
        ObjectNode call = calls.get(index);
        if (call == null) {
          call = ResponseObjects.functionCall(
              "fc_" + delta.path("id").asText("call_" + index),
              delta.path("id").asText("call_" + index),
              delta.path("function").path("name").asText(""),
              "",
              "in_progress");
          calls.put(index, call);
          callIndexes.put(index, nextIndex++);
          send(event("response.output_item.added")
              .put("output_index", callIndexes.get(index))
              .set("item", call.deepCopy()));
        }
        String piece = delta.path("function").path("arguments").asText("");
        if (!piece.isEmpty()) {
          call.put("arguments", call.get("arguments").asText() + piece);
          send(event("response.function_call_arguments.delta")
              .put("item_id", call.get("id").asText())
              .put("output_index", callIndexes.get(index))
              .put("delta", piece));
        }
      }
    }

    /** The calls as completed output items. */
    List<ObjectNode> calls() {
      List<ObjectNode> done = new ArrayList<>();
      calls.values().forEach(call -> done.add(call.deepCopy().put("status", "completed")));
      return done;
    }

    @Override
    public void onClientGone(Runnable abort) {
      events.onGone(abort);
    }

    void complete(ObjectNode response) {
      if (messageIndex < 0 && calls.isEmpty()) {
        openMessage(); // an empty answer is still a message, as in the response object
      }
      Map<Integer, Runnable> closings = new TreeMap<>();
      if (messageIndex >= 0) {
        closings.put(messageIndex, this::closeMessage);
      }
      calls.forEach((index, call) -> closings.put(callIndexes.get(index), () -> {
        send(event("response.function_call_arguments.done")
            .put("item_id", call.get("id").asText())
            .put("output_index", callIndexes.get(index))
            .put("arguments", call.get("arguments").asText()));
        send(event("response.output_item.done")
            .put("output_index", callIndexes.get(index))
            .set("item", call.deepCopy().put("status", "completed")));
      }));
      closings.values().forEach(Runnable::run);
      send(event("response.completed").set("response", response));
    }

    private void closeMessage() {
      String whole = text.toString();
      send(textEvent("response.output_text.done").put("text", whole));
      send(textEvent("response.content_part.done").set("part", ResponseObjects.part(whole)));
      send(event("response.output_item.done")
          .put("output_index", messageIndex)
          .set("item", ResponseObjects.message(ids, whole, "completed")));
    }

    /** A failure after the stream began: one error event, as OpenAI ends a failed stream. */
    void fail(ApiException error) {
      try {
        @SuppressWarnings("unchecked")
        Map<String, Object> body =
            (Map<String, Object>) ErrorResponses.openAiBody(error).get("error");
        ObjectNode event = event("error");
        event.put("code", String.valueOf(body.get("code")));
        event.put("message", String.valueOf(body.get("message")));
        event.putNull("param");
        send(event);
      } catch (ClientGoneException gone) {
        // Nobody left to tell.
      }
    }
  }

  /** A sink for whole responses: the text is taken from the generation's result. */
  private enum Quiet implements TokenSink {
    INSTANCE;

    @Override
    public void begin() {}

    @Override
    public void text(String piece) {}
  }
}
