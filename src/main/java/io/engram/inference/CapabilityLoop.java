package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.access.Principal;
import io.engram.actions.CapabilityExecutor;
import io.engram.inference.call.ModelCall;
import io.engram.inference.call.Outcome;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A conversation as an assistant, step by step: the model answers; when it called capability
 * tools, Engram carries them out ({@link CapabilityExecutor}), gives the results back as tool
 * messages and lets the model go on, at most {@code maxSteps} times (then the model is asked once
 * more with no tools, so it answers in words). The client gets one answer: streamed, the text of
 * every step as it comes (capability calls never reach it), whole, the steps' text joined. Calls of
 * the client's own tools end the conversation and go back to the client as usual (capability calls
 * made in the same turn are carried out first). Usage is the sum of the steps.
 */
final class CapabilityLoop {
  private final Gateway gateway;
  private final CapabilityExecutor executor;
  private final Principal caller;
  private final String agent;
  private final CapabilityExecutor.Offer offer;
  private final Set<String> clientTools;
  private final String requestId;
  private final int maxSteps;

  CapabilityLoop(
      Gateway gateway,
      CapabilityExecutor executor,
      Principal caller,
      String agent,
      CapabilityExecutor.Offer offer,
      Set<String> clientTools,
      String requestId,
      int maxSteps) {
    this.gateway = gateway;
    this.executor = executor;
    this.caller = caller;
    this.agent = agent;
    this.offer = offer;
    this.clientTools = clientTools;
    this.requestId = requestId;
    this.maxSteps = maxSteps;
  }

  Outcome run(ModelCall first, TokenSink client) {
    StringBuilder text = new StringBuilder();
    int prompt = 0;
    int completion = 0;
    ModelCall step = first;
    for (int done = 0; ; done++) {
      Step sink = new Step(client, done == 0);
      Outcome outcome = gateway.generate(step, sink);
      Generation generation = outcome.generation();
      text.append(generation.text());
      prompt += outcome.usage().promptTokens();
      completion += outcome.usage().completionTokens();
      List<JsonNode> calls = step.request().stream()
          ? sink.capabilityCalls()
          : capabilityCalls(generation.toolCalls());
      JsonNode clientCalls =
          step.request().stream() ? sink.clientCalls() : clientCalls(generation.toolCalls());
      Generation.Usage usage = new Generation.Usage(prompt, completion);
      if (calls.isEmpty() || done >= maxSteps) {
        return new Outcome(
            new Generation(text.toString(), finish(generation, clientCalls), usage, clientCalls),
            usage);
      }
      List<ChatMessage> turn = carryOut(generation.text(), calls);
      if (clientCalls != null) {
        // The client's own tools: the conversation goes back to it, as a plain chat would.
        return new Outcome(
            new Generation(text.toString(), "tool_calls", usage, clientCalls), usage);
      }
      ObjectNode tooling = step.request().tooling();
      if (done == maxSteps - 1 && tooling != null && tooling.has("tools")) {
        tooling = tooling.deepCopy().put("tool_choice", "none"); // the last step answers in words
      }
      step = step.continued(turn, tooling);
    }
  }

  /** The client sees "tool_calls" only for calls it got (capability calls are Engram's). */
  private static String finish(Generation generation, JsonNode clientCalls) {
    if (clientCalls != null) {
      return "tool_calls";
    }
    return "tool_calls".equals(generation.finishReason())
        ? Generation.STOP
        : generation.finishReason();
  }

  /** The model's turn (its capability calls) and the results, as the next step's messages. */
  private List<ChatMessage> carryOut(String said, List<JsonNode> calls) {
    ObjectNode tooling = Json.MAPPER.createObjectNode();
    ArrayNode asked = tooling.putArray("tool_calls");
    List<ChatMessage> results = new ArrayList<>();
    for (JsonNode call : calls) {
      asked.add(call);
      ObjectNode told = executor.execute(
          caller,
          agent,
          offer,
          new CapabilityExecutor.Call(
              call.path("id").asText(),
              call.path("function").path("name").asText(),
              call.path("function").path("arguments").asText("")),
          requestId);
      results.add(new ChatMessage(
          ChatMessage.TOOL,
          Json.write(told),
          Json.MAPPER.createObjectNode().put("tool_call_id", call.path("id").asText())));
    }
    List<ChatMessage> turn = new ArrayList<>();
    turn.add(new ChatMessage(ChatMessage.ASSISTANT, said.isEmpty() ? null : said, tooling));
    turn.addAll(results);
    return turn;
  }

  /**
   * A call is Engram's when it names a capability offered, or one not offered that the client has
   * no tool of its own for (a model naming a capability it was not given is refused, with why).
   */
  private boolean isCapabilityCall(String name) {
    return offer.offers(name) || (offer.isCapability(name) && !clientTools.contains(name));
  }

  private List<JsonNode> capabilityCalls(JsonNode calls) {
    List<JsonNode> mine = new ArrayList<>();
    if (calls != null) {
      calls.forEach(call -> {
        if (isCapabilityCall(call.path("function").path("name").asText())) {
          mine.add(call);
        }
      });
    }
    return mine;
  }

  private JsonNode clientCalls(JsonNode calls) {
    ArrayNode theirs = Json.MAPPER.createArrayNode();
    if (calls != null) {
      calls.forEach(call -> {
        if (!isCapabilityCall(call.path("function").path("name").asText())) {
          theirs.add(call);
        }
      });
    }
    return theirs.isEmpty() ? null : theirs;
  }

  /**
   * One step's sink: text goes to the client as it comes; tool-call deltas are sorted by the
   * call's name (it comes with the call's first delta): capability calls are gathered whole for
   * Engram, the client's own go on to the client, renumbered from 0 in the order they start.
   */
  private final class Step implements TokenSink {
    private final TokenSink client;
    private final boolean first;
    private final Map<Integer, ObjectNode> capability = new LinkedHashMap<>();
    private final Map<Integer, Integer> clientIndex = new HashMap<>();
    private final Map<Integer, ObjectNode> clientCalls = new LinkedHashMap<>();

    Step(TokenSink client, boolean first) {
      this.client = client;
      this.first = first;
    }

    @Override
    public void begin() {
      if (first) {
        client.begin(); // later steps continue the stream the first one opened
      }
    }

    @Override
    public void answeredBy(String deployment, int attempts) {
      if (first) {
        client.answeredBy(deployment, attempts);
      }
    }

    @Override
    public void text(String piece) {
      client.text(piece);
    }

    @Override
    public void onClientGone(Runnable abort) {
      client.onClientGone(abort);
    }

    @Override
    public void toolCalls(JsonNode deltas) {
      ArrayNode forward = Json.MAPPER.createArrayNode();
      for (JsonNode delta : deltas) {
        int index = delta.path("index").asInt(0);
        String name = delta.path("function").path("name").asText("");
        if (!capability.containsKey(index) && !clientIndex.containsKey(index)) {
          if (isCapabilityCall(name)) {
            capability.put(index, call(delta));
          } else {
            clientIndex.put(index, clientIndex.size());
            clientCalls.put(index, call(delta));
          }
        }
        ObjectNode whole =
            capability.containsKey(index) ? capability.get(index) : clientCalls.get(index);
        ObjectNode function = (ObjectNode) whole.get("function");
        function.put(
            "arguments",
            function.path("arguments").asText("")
                + delta.path("function").path("arguments").asText(""));
        if (clientIndex.containsKey(index)) {
          forward.add(((ObjectNode) delta.deepCopy()).put("index", clientIndex.get(index)));
        }
      }
      if (!forward.isEmpty()) {
        client.toolCalls(forward);
      }
    }

    private ObjectNode call(JsonNode delta) {
      ObjectNode call = Json.MAPPER
          .createObjectNode()
          .put("id", delta.path("id").asText())
          .put("type", "function");
      call.putObject("function")
          .put("name", delta.path("function").path("name").asText(""))
          .put("arguments", "");
      return call;
    }

    List<JsonNode> capabilityCalls() {
      return List.copyOf(capability.values());
    }

    JsonNode clientCalls() {
      if (clientCalls.isEmpty()) {
        return null;
      }
      ArrayNode calls = Json.MAPPER.createArrayNode();
      clientCalls.values().forEach(calls::add);
      return calls;
    }
  }
}
