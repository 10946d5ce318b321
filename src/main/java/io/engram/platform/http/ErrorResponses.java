package io.engram.platform.http;

import io.javalin.http.Context;
import java.util.LinkedHashMap;
import java.util.Map;

/** Writes an {@link ApiException} in the shape of the route family the request belongs to. */
public final class ErrorResponses {

  private ErrorResponses() {}

  /**
   * The longest wait a client should sleep through before retrying by itself. The official
   * OpenAI and Anthropic SDKs honour a Retry-After up to a minute; a longer one (a budget that
   * renews tomorrow, the hour's tokens) some of them honoured too, sleeping for hours inside one
   * call.
   */
  public static final long LONGEST_CLIENT_WAIT_SECONDS = 60;

  /** Read by both SDK families: {@code false} forbids their automatic retry of this answer. */
  public static final String SHOULD_RETRY = "x-should-retry";

  public static void write(Context ctx, ApiException e) {
    ctx.status(e.status());
    if (e.retryAfterSeconds() != null) {
      // The wait stays truthful; past what a client should block on, it is told not to retry
      // by itself, so the caller gets the refusal now and decides.
      ctx.header("Retry-After", String.valueOf(e.retryAfterSeconds()));
      if (e.retryAfterSeconds() > LONGEST_CLIENT_WAIT_SECONDS) {
        ctx.header(SHOULD_RETRY, "false");
      }
    }
    Responses.json(ctx, body(RouteFamily.of(ctx.path()), e));
  }

  static Map<String, Object> body(RouteFamily family, ApiException e) {
    return switch (family) {
      case PRODUCT -> productBody(e);
      case ANTHROPIC -> anthropicBody(e);
      case OPENAI -> openAiBody(e);
    };
  }

  /**
   * Anthropic's error shape, as its clients read it ({@code type: error}, an {@code error} with
   * Anthropic's type for the status and the message), with Engram's code and param kept.
   */
  public static Map<String, Object> anthropicBody(ApiException e) {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put(
        "type",
        switch (e.status()) {
          case 400, 409, 413, 415, 422 -> "invalid_request_error";
          case 401 -> "authentication_error";
          case 403 -> "permission_error";
          case 404 -> "not_found_error";
          case 429 -> "rate_limit_error";
          case 503, 529 -> "overloaded_error";
          default -> "api_error";
        });
    error.put("message", e.getMessage());
    error.put("code", e.code());
    error.put("param", e.param());
    if (e.retryAfterSeconds() != null) {
      error.put("retry_after", e.retryAfterSeconds());
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("type", "error");
    body.put("error", error);
    return body;
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
    if (e.validationErrors().size() > 1) {
      // Several inputs refused at once (an import's lines): each, not only the first.
      error.put(
          "errors",
          e.validationErrors().stream()
              .map(v -> {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("param", v.field());
                one.put("message", v.error());
                return one;
              })
              .toList());
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
      case 408 -> "Request timeout";
      case 412 -> "Precondition failed";
      case 413 -> "Payload too large";
      case 414 -> "URI too long";
      case 422 -> "Unprocessable request";
      case 431 -> "Request headers too large";
      case 415 -> "Unsupported media type";
      case 429 -> "Too many requests";
      case 501 -> "Not implemented";
      case 502 -> "Bad gateway";
      case 503 -> "Service unavailable";
      case 504 -> "Gateway timeout";
      case 507 -> "Insufficient storage";
      default -> "Internal server error";
    };
  }
}
