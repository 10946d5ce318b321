package io.engram.inference.remote;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.EngineException;
import io.engram.platform.json.Json;

/** Turns an upstream's error answer into the engine failure it means for Engram's callers. */
final class UpstreamErrors {
  private static final int MAX_MESSAGE = 500;

  private UpstreamErrors() {}

  static EngineException fromStatus(int status, String body, String retryAfter) {
    String detail = detail(body);
    String message = "The upstream answered " + status + (detail.isEmpty() ? "" : ": " + detail);
    return switch (status) {
      case 400, 413, 422 -> new EngineException(EngineException.Failure.REJECTED, message);
      case 401, 403, 404 ->
        new EngineException(
            EngineException.Failure.MISCONFIGURED,
            message + " (check the provider's API key and the deployment's model name)");
      case 408, 504 -> new EngineException(EngineException.Failure.TIMEOUT, message);
      case 429 ->
        new EngineException(
            EngineException.Failure.RATE_LIMITED, message, retryAfter(retryAfter), null);
      default -> new EngineException(EngineException.Failure.UPSTREAM_ERROR, message);
    };
  }

  /** The upstream's own message when it sent OpenAI's error shape, else the start of its body. */
  static String detail(String body) {
    if (body == null || body.isBlank()) {
      return "";
    }
    try {
      JsonNode json = Json.MAPPER.readTree(body);
      if (json != null && json.isObject()) {
        String message = message(json);
        if (!message.isEmpty()) {
          return message;
        }
      }
    } catch (Exception notJson) {
      // fall through to the raw text
    }
    String text = body.strip();
    return text.length() > MAX_MESSAGE ? text.substring(0, MAX_MESSAGE) + "..." : text;
  }

  static String message(JsonNode json) {
    JsonNode error = json.path("error");
    String message = error.isTextual() ? error.asText() : error.path("message").asText("");
    return message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) + "..." : message;
  }

  private static Long retryAfter(String header) {
    if (header == null) {
      return null;
    }
    try {
      return Math.max(1, (long) Math.ceil(Double.parseDouble(header.strip())));
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
