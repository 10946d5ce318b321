package io.engram.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How the fake upstream answers a chat request that asks for several choices ({@code n}) or log
 * probabilities ({@code logprobs}, {@code top_logprobs}), in OpenAI's shapes: choice 0 says the
 * script's pieces, choice i says "Answer i+1."; each token has a made-up log probability
 * (-0.1 for the first, -0.2 for the second...) and as many alternatives as asked.
 */
final class FakeChoices {
  private final int n;
  private final boolean logprobs;
  private final int top;
  private final List<List<String>> pieces = new ArrayList<>();

  private FakeChoices(JsonNode body, List<String> first) {
    n = body.path("n").asInt(1);
    logprobs = body.path("logprobs").asBoolean(false);
    top = body.path("top_logprobs").asInt(0);
    for (int i = 0; i < n; i++) {
      pieces.add(i == 0 ? first : List.of("Answer", " " + (i + 1), "."));
    }
  }

  /** The choices asked for, or null when the request asks for one choice without logprobs. */
  static FakeChoices of(JsonNode body, List<String> first) {
    return body.path("n").asInt(1) > 1 || body.path("logprobs").asBoolean(false)
        ? new FakeChoices(body, first)
        : null;
  }

  int completionTokens() {
    return pieces.stream().mapToInt(List::size).sum();
  }

  /** The whole answer's choices. */
  void whole(ArrayNode choices) {
    for (int i = 0; i < n; i++) {
      ObjectNode choice = choices.addObject().put("index", i);
      choice
          .putObject("message")
          .put("role", "assistant")
          .put("content", String.join("", pieces.get(i)))
          .putNull("refusal");
      if (logprobs) {
        ArrayNode content = choice.putObject("logprobs").putArray("content");
        for (int k = 0; k < pieces.get(i).size(); k++) {
          content.add(token(pieces.get(i).get(k), k));
        }
      } else {
        choice.putNull("logprobs");
      }
      choice.put("finish_reason", "stop");
    }
  }

  /** The streamed answer: one chunk per choice and piece, interleaved, then each choice's end. */
  List<ObjectNode> chunks() {
    List<ObjectNode> chunks = new ArrayList<>();
    int longest = pieces.stream().mapToInt(List::size).max().orElse(0);
    for (int k = 0; k < longest; k++) {
      for (int i = 0; i < n; i++) {
        if (k >= pieces.get(i).size()) {
          continue;
        }
        ObjectNode choice = Json.MAPPER.createObjectNode().put("index", i);
        ObjectNode delta = choice.putObject("delta");
        if (k == 0) {
          delta.put("role", "assistant");
        }
        delta.put("content", pieces.get(i).get(k));
        if (logprobs) {
          choice
              .putObject("logprobs")
              .putArray("content")
              .add(token(pieces.get(i).get(k), k));
        } else {
          choice.putNull("logprobs");
        }
        chunks.add(choice.putNull("finish_reason"));
      }
    }
    for (int i = 0; i < n; i++) {
      ObjectNode end = Json.MAPPER.createObjectNode().put("index", i);
      end.putObject("delta");
      chunks.add(end.putNull("logprobs").put("finish_reason", "stop"));
    }
    return chunks;
  }

  private ObjectNode token(String text, int position) {
    ObjectNode token = entry(text, -0.1 * (position + 1));
    ArrayNode alternatives = token.putArray("top_logprobs");
    for (int j = 0; j < top; j++) {
      alternatives.add(entry(j == 0 ? text : text + j, -0.1 * (position + 1) - j));
    }
    return token;
  }

  private static ObjectNode entry(String text, double logprob) {
    ObjectNode entry = Json.MAPPER.createObjectNode().put("token", text).put("logprob", logprob);
    ArrayNode bytes = entry.putArray("bytes");
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      bytes.add(b & 0xff);
    }
    return entry;
  }
}
