package io.engram.sdk;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * An error answer of Engram, with the fields of its error body: the HTTP status, the error's
 * type, code and param, how long to wait before retrying (on 429) and the request's id (for the
 * server's logs). A status of 0 means no answer came (the connection failed).
 */
public final class EngramException extends RuntimeException {
  private final int status;
  private final String type;
  private final String code;
  private final String param;
  private final Long retryAfter;
  private final String requestId;

  EngramException(int status, String type, String code, String param, String message,
      Long retryAfter, String requestId) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.retryAfter = retryAfter;
    this.requestId = requestId;
  }

  static EngramException of(int status, JsonNode body, String requestId) {
    JsonNode error = body == null ? null : body.get("error");
    if (error != null && error.isObject()) {
      return new EngramException(
          status,
          text(error, "type"),
          text(error, "code"),
          text(error, "param"),
          error.path("message").asText("HTTP " + status),
          error.hasNonNull("retry_after") ? error.get("retry_after").asLong() : null,
          requestId);
    }
    String message = body == null ? "HTTP " + status : body.path("message").asText("HTTP " + status);
    return new EngramException(
        status,
        error == null ? null : error.asText(),
        null,
        null,
        message,
        body != null && body.hasNonNull("retryAfter") ? body.get("retryAfter").asLong() : null,
        requestId);
  }

  private static String text(JsonNode node, String field) {
    return node.hasNonNull(field) ? node.get(field).asText() : null;
  }

  public int status() {
    return status;
  }

  public String type() {
    return type;
  }

  public String code() {
    return code;
  }

  public String param() {
    return param;
  }

  /** Seconds to wait before retrying, on a 429; null otherwise. */
  public Long retryAfter() {
    return retryAfter;
  }

  public String requestId() {
    return requestId;
  }
}
