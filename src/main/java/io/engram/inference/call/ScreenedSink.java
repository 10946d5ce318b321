package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.guardrails.AnswerScreen;
import io.engram.guardrails.Guardrails;
import io.engram.guardrails.Screening;
import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.json.Json;
import java.util.Map;
import java.util.TreeMap;

/**
 * The client's sink behind the output guardrails. Streamed, each piece goes through the answer's
 * screen and on as far as it lets go (a block stops the engine: its exception ends the stream
 * with one error event); tool-call deltas are held until the answer ends, when their arguments
 * are whole and screened. A whole answer's pieces are not passed on: its text is screened whole
 * at the end ({@link #finish}).
 */
final class ScreenedSink extends ForwardingSink {
  private final AnswerScreen screen;
  private final boolean streamed;
  private final StringBuilder delivered = new StringBuilder();
  /** The streamed tool calls by index, their deltas merged: id, type, name, arguments. */
  private final Map<Integer, ObjectNode> calls = new TreeMap<>();

  private ArrayNode screenedCalls;
  /** The output guardrail that blocked the tool calls' arguments, or null. */
  Screening.Firing blockedBy;

  ScreenedSink(TokenSink sink, AnswerScreen screen, boolean streamed) {
    super(sink);
    this.screen = screen;
    this.streamed = streamed;
  }

  @Override
  public void text(String piece) {
    if (!streamed) {
      return;
    }
    String out = screen.take(piece);
    if (out == null) {
      throw Guardrails.blocked(screen.blockedBy());
    }
    deliver(out);
  }

  @Override
  public void toolCalls(JsonNode deltas) {
    if (!streamed) {
      sink.toolCalls(deltas);
      return;
    }
    for (JsonNode delta : deltas) {
      ObjectNode call = calls.computeIfAbsent(delta.path("index").asInt(0), index -> {
        ObjectNode fresh = Json.MAPPER.createObjectNode().put("index", index);
        fresh.putObject("function").put("arguments", "");
        return fresh;
      });
      copy(delta, call, "id");
      copy(delta, call, "type");
      JsonNode function = delta.path("function");
      ObjectNode merged = (ObjectNode) call.get("function");
      copy(function, merged, "name");
      merged.put(
          "arguments",
          merged.path("arguments").asText() + function.path("arguments").asText(""));
    }
  }

  /** Several choices never reach a screened call (refused when it is prepared): the first's. */
  @Override
  public void choice(JsonNode choice) {
    TokenSink.firstChoice(this, choice);
  }

  /**
   * The answer's text as the client gets it, the rest let go now that it ended (streamed), or the
   * whole screened; null when a guardrail blocked it.
   */
  String finish(String whole) {
    if (!streamed) {
      String first = screen.take(whole == null ? "" : whole);
      String rest = first == null ? null : screen.finish();
      return rest == null ? null : first + rest;
    }
    String rest = screen.finish();
    if (rest == null) {
      return null;
    }
    deliver(rest);
    return delivered.toString();
  }

  /** The streamed tool calls, whole (null when there were none). */
  ArrayNode heldCalls() {
    if (calls.isEmpty()) {
      return null;
    }
    ArrayNode whole = Json.MAPPER.createArrayNode();
    calls.values().forEach(whole::add);
    return whole;
  }

  void heldCallsScreened(ArrayNode screened) {
    this.screenedCalls = screened;
  }

  /** The held tool calls, screened, as one delta once the text is out. */
  void deliverHeldCalls() {
    if (screenedCalls != null && !screenedCalls.isEmpty()) {
      sink.toolCalls(screenedCalls);
    }
  }

  private void deliver(String out) {
    if (!out.isEmpty()) {
      sink.text(out);
      delivered.append(out);
    }
  }

  private static void copy(JsonNode from, ObjectNode to, String field) {
    if (from.hasNonNull(field)) {
      to.set(field, from.get(field));
    }
  }
}
