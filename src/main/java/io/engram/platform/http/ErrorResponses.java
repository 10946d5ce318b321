package io.engram.platform.http;

import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;

/** Writes an {@link ApiException} in the shape of the route family the request belongs to. */
public final class ErrorResponses {

  private ErrorResponses() {}

  public static void write(Context ctx, ApiException e) {
    ctx.status(e.status());
    if (e.retryAfterSeconds() != null) {
      ctx.header("Retry-After", String.valueOf(e.retryAfterSeconds()));
    }
    Map<String, Object> body =
        RouteFamily.of(ctx.path()) == RouteFamily.PRODUCT ? productBody(e) : openAiBody(e);
    Responses.json(ctx, body);
  }

  static Map<String, Object> productBody(ApiException e) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("success", false);
    if (!e.validationErrors().isEmpty()) {
      body.put("error", "Validation failed");
      body.put("validationErrors", e.validationErrors());
      return body;
    }
    body.put("error", title(e.status()));
    body.put("message", e.getMessage());
    if (e.param() != null) {
      body.put("field", e.param()); // which input was refused, for a form to point at it
    }
    if (e.retryAfterSeconds() != null) {
      body.put("retryAfter", e.retryAfterSeconds());
    }
    return body;
  }

  public static Map<String, Object> openAiBody(ApiException e) {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("message", e.getMessage());
    error.put("type", e.type().wireName());
    error.put("code", e.code());
    error.put("param", e.param());
    if (e.retryAfterSeconds() != null) {
      error.put("retry_after", e.retryAfterSeconds());
    }
    return Map.of("error", error);
  }

  static String title(int status) {
    return switch (status) {
      case 400 -> "Invalid request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not found";
      case 405 -> "Method not allowed";
      case 409 -> "Conflict";
      case 412 -> "Precondition failed";
      case 413 -> "Payload too large";
      case 415 -> "Unsupported media type";
      case 429 -> "Too many requests";
      case 501 -> "Not implemented";
      case 503 -> "Service unavailable";
      default -> "Internal server error";
    };
  }
}
