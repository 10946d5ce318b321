package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.inference.engine.ChatMessage;
import io.engram.inference.engine.Generation;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorResponses;
import io.engram.platform.json.Json;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * OpenAI's response objects, written exactly as the official clients parse them: chat completions
 * and their chunks, text completions and theirs, and usage.
 */
final class Replies {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Which of OpenAI's two generation shapes a reply takes. */
  enum Kind {
    CHAT("chatcmpl-", "chat.completion", "chat.completion.chunk"),
    TEXT("cmpl-", "text_completion", "text_completion");

    final String idPrefix;
    final String object;
    final String chunkObject;

    Kind(String idPrefix, String object, String chunkObject) {
      this.idPrefix = idPrefix;
      this.object = object;
      this.chunkObject = chunkObject;
    }
  }

  /** What every chunk and the reply share: the same id, created time and model throughout. */
  record Header(Kind kind, String id, long created, String model) {
    static Header create(Kind kind, String model) {
      byte[] bytes = new byte[12];
      RANDOM.nextBytes(bytes);
      return new Header(
          kind,
          kind.idPrefix + HexFormat.of().formatHex(bytes),
          System.currentTimeMillis() / 1000,
          model);
    }
  }

  private Replies() {}

  static ObjectNode whole(
      Header header, Generation generation, Generation.Usage usage, int memoryTokens) {
    ObjectNode reply = start(header, header.kind().object);
    if (generation.choices() != null) {
      var choices = reply.putArray("choices");
      generation.choices().forEach(upstream -> choices.add(relayedChoice(upstream)));
      reply.set("usage", usage(usage, memoryTokens));
      return reply;
    }
    ObjectNode choice = reply.putArray("choices").addObject();
    if (header.kind() == Kind.CHAT) {
      choice.put("index", 0);
      ObjectNode message = choice
          .putObject("message")
          .put("role", ChatMessage.ASSISTANT)
          .put("content", generation.text());
      if (generation.toolCalls() != null) {
        if (generation.text().isEmpty()) {
          message.putNull("content"); // OpenAI's form of a message that only calls tools
        }
        message.set("tool_calls", generation.toolCalls());
      }
      message.putNull("refusal");
    } else {
      choice.put("text", generation.text()).put("index", 0);
    }
    choice.putNull("logprobs");
    choice.put("finish_reason", generation.finishReason());
    reply.set("usage", usage(usage, memoryTokens));
    return reply;
  }

  /**
   * One of several choices (or a choice with log probabilities) of a whole chat answer, in
   * OpenAI's form, from the model's: only the fields OpenAI defines are carried.
   */
  private static ObjectNode relayedChoice(JsonNode upstream) {
    ObjectNode choice =
        Json.MAPPER.createObjectNode().put("index", upstream.path("index").asInt());
    JsonNode from = upstream.path("message");
    ObjectNode message = choice.putObject("message").put("role", ChatMessage.ASSISTANT);
    message.set("content", textOrNull(from.path("content")));
    if (from.path("tool_calls").isArray()) {
      message.set("tool_calls", from.get("tool_calls"));
    }
    message.set("refusal", textOrNull(from.path("refusal")));
    choice.set("logprobs", objectOrNull(upstream.path("logprobs")));
    choice.put("finish_reason", upstream.path("finish_reason").asText(Generation.STOP));
    return choice;
  }

  /** A chunk carrying one choice of the model's chunk as it came (OpenAI's fields only). */
  static String relayedPiece(Header header, JsonNode upstream, boolean includeUsage) {
    ObjectNode chunk = start(header, header.kind().chunkObject);
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", upstream.path("index").asInt());
    JsonNode from = upstream.path("delta");
    ObjectNode delta = choice.putObject("delta");
    for (String field : new String[] {"role", "content", "refusal"}) {
      if (from.has(field)) {
        delta.set(field, textOrNull(from.get(field)));
      }
    }
    if (from.path("tool_calls").isArray()) {
      delta.set("tool_calls", from.get("tool_calls"));
    }
    choice.set("logprobs", objectOrNull(upstream.path("logprobs")));
    choice.set("finish_reason", textOrNull(upstream.path("finish_reason")));
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return Json.write(chunk);
  }

  private static JsonNode textOrNull(JsonNode value) {
    return value.isTextual() ? value : Json.MAPPER.nullNode();
  }

  private static JsonNode objectOrNull(JsonNode value) {
    return value.isObject() ? value : Json.MAPPER.nullNode();
  }

  /** A chat chunk carrying a piece of the model's tool calls (OpenAI's delta form). */
  static String toolCallsPiece(
      Header header, JsonNode deltas, boolean first, boolean includeUsage) {
    ObjectNode chunk = start(header, header.kind().chunkObject);
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode delta = choice.putObject("delta");
    if (first) {
      delta.put("role", ChatMessage.ASSISTANT);
      delta.putNull("content");
    }
    delta.set("tool_calls", deltas);
    choice.putNull("logprobs");
    choice.putNull("finish_reason");
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return Json.write(chunk);
  }

  /** A chunk carrying one piece of text; the first chat chunk also carries the role. */
  static String piece(Header header, String text, boolean first, boolean includeUsage) {
    ObjectNode chunk = start(header, header.kind().chunkObject);
    ObjectNode choice = chunk.putArray("choices").addObject();
    if (header.kind() == Kind.CHAT) {
      choice.put("index", 0);
      ObjectNode delta = choice.putObject("delta");
      if (first) {
        delta.put("role", ChatMessage.ASSISTANT);
      }
      delta.put("content", text);
    } else {
      choice.put("text", text).put("index", 0);
    }
    choice.putNull("logprobs");
    choice.putNull("finish_reason");
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return Json.write(chunk);
  }

  /** The one chunk that carries the finish reason, with an empty delta. */
  static String finish(Header header, String finishReason, boolean includeUsage) {
    ObjectNode chunk = start(header, header.kind().chunkObject);
    ObjectNode choice = chunk.putArray("choices").addObject();
    if (header.kind() == Kind.CHAT) {
      choice.put("index", 0);
      choice.putObject("delta");
    } else {
      choice.put("text", "").put("index", 0);
    }
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return Json.write(chunk);
  }

  /** With stream_options.include_usage: a last chunk with empty choices and the usage. */
  static String usageChunk(Header header, Generation.Usage usage, int memoryTokens) {
    ObjectNode chunk = start(header, header.kind().chunkObject);
    chunk.putArray("choices");
    chunk.set("usage", usage(usage, memoryTokens));
    return Json.write(chunk);
  }

  /** An error inside a stream that already began: OpenAI's clients raise it as an API error. */
  static String error(ApiException e) {
    return Json.write(ErrorResponses.openAiBody(e));
  }

  static ObjectNode usage(Generation.Usage usage, int memoryTokens) {
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.put("prompt_tokens", usage.promptTokens());
    node.put("completion_tokens", usage.completionTokens());
    node.put("total_tokens", usage.total());
    node.put("memory_tokens", memoryTokens);
    return node;
  }

  private static ObjectNode start(Header header, String object) {
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.put("id", header.id());
    node.put("object", object);
    node.put("created", header.created());
    node.put("model", header.model());
    return node;
  }
}
