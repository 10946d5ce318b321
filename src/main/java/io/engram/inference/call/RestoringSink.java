package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.guardrails.Restorer;
import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.json.Json;
import java.util.Map;
import java.util.TreeMap;

/**
 * The client's sink, outermost, where a {@code restore} guardrail redacted the input: the
 * placeholders the provider saw come back as the client's originals, in the answer's text and in
 * its tool calls' arguments (a tool the client runs gets the real address). Everything inside
 * (the log, the history, the cache) keeps the placeholders.
 */
final class RestoringSink extends ForwardingSink {
  private final Map<String, String> originals;
  private final Restorer text;
  /** Each streamed tool call's arguments, restored as they come (a placeholder may be split). */
  private final Map<Integer, Restorer> arguments = new TreeMap<>();

  RestoringSink(TokenSink sink, Map<String, String> originals) {
    super(sink);
    this.originals = originals;
    this.text = new Restorer(originals);
  }

  @Override
  public void text(String piece) {
    String out = text.take(piece);
    if (!out.isEmpty()) {
      sink.text(out);
    }
  }

  @Override
  public void toolCalls(JsonNode deltas) {
    ArrayNode restored = deltas.deepCopy();
    for (JsonNode delta : restored) {
      JsonNode function = delta.get("function");
      if (function instanceof ObjectNode named && named.has("arguments")) {
        Restorer restorer = arguments.computeIfAbsent(
            delta.path("index").asInt(0), index -> new Restorer(originals));
        named.put("arguments", restorer.take(named.path("arguments").asText("")));
      }
    }
    sink.toolCalls(restored);
  }

  /** The rest of a streamed answer let go, and the whole outcome restored for the client. */
  Outcome finish(Outcome outcome) {
    String rest = text.finish();
    if (!rest.isEmpty()) {
      sink.text(rest);
    }
    arguments.forEach((index, restorer) -> {
      String tail = restorer.finish();
      if (!tail.isEmpty()) {
        ObjectNode delta = Json.MAPPER.createObjectNode().put("index", index);
        delta.putObject("function").put("arguments", tail);
        sink.toolCalls(Json.MAPPER.createArrayNode().add(delta));
      }
    });
    Generation generation = outcome.generation();
    Restorer whole = new Restorer(originals);
    JsonNode calls = generation.toolCalls();
    if (calls != null && calls.isArray()) {
      ArrayNode restored = calls.deepCopy();
      for (JsonNode call : restored) {
        if (call.get("function") instanceof ObjectNode function && function.has("arguments")) {
          function.put("arguments", whole.restored(function.path("arguments").asText()));
        }
      }
      calls = restored;
    }
    return new Outcome(
        new Generation(
            whole.restored(generation.text()),
            generation.finishReason(),
            generation.usage(),
            calls,
            generation.choices()),
        outcome.usage());
  }
}
