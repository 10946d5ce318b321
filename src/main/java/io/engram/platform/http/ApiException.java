package io.engram.platform.http;

import java.util.List;

/**
 * A failure to report to the client. It carries what both error shapes need (status, type, code,
 * message, param); {@link ErrorResponses} writes it in the shape of the route family.
 */
public final class ApiException extends RuntimeException {
  private final int status;
  private final ErrorType type;
  private final String code;
  private final String param;
  private final Long retryAfterSeconds;
  private final List<ValidationError> validationErrors;

  private ApiException(
      int status,
      ErrorType type,
      String code,
      String message,
      String param,
      Long retryAfterSeconds,
      List<ValidationError> validationErrors) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.retryAfterSeconds = retryAfterSeconds;
    this.validationErrors = validationErrors == null ? List.of() : List.copyOf(validationErrors);
  }

  /**
   * The same refusal naming the field as its client sent it, where a route translated its request
   * into another's ({@code names}: the translated name to the client's): the parameter, and the
   * name quoted in the message. Itself when its parameter was not renamed.
   */
  public ApiException renamed(java.util.Map<String, String> names) {
    String sent = param == null ? null : names.get(param);
    if (sent == null) {
      return this;
    }
    return new ApiException(
        status,
        type,
        code,
        getMessage().replace("'" + param + "'", "'" + sent + "'"),
        sent,
        retryAfterSeconds,
        validationErrors);
  }

  public static ApiException badRequest(String param, String message) {
    return new ApiException(
        400, ErrorType.INVALID_REQUEST_ERROR, "invalid_request", message, param, null, null);
  }

  /** 400 with a code of its own, for clients that act on the kind of mistake. */
  public static ApiException invalid(String code, String param, String message) {
    return new ApiException(400, ErrorType.INVALID_REQUEST_ERROR, code, message, param, null, null);
  }

  /** 415: the body is not of the type the route reads. */
  public static ApiException unsupportedMediaType(String expected, String contentType) {
    return new ApiException(
        415,
        ErrorType.INVALID_REQUEST_ERROR,
        "unsupported_media_type",
        "Content-Type must be " + expected + ", got '"
            + (contentType == null ? "none" : contentType) + "'",
        null,
        null,
        null);
  }

  /** 413: the body is larger than the route (or the organization's plan) takes. */
  public static ApiException tooLarge(String message) {
    return new ApiException(
        413, ErrorType.INVALID_REQUEST_ERROR, "request_too_large", message, null, null, null);
  }

  public static ApiException methodNotAllowed(String message) {
    return new ApiException(
        405, ErrorType.INVALID_REQUEST_ERROR, "method_not_allowed", message, null, null, null);
  }

  public static ApiException validation(List<ValidationError> errors) {
    String first = errors.isEmpty() ? "Validation failed" : errors.getFirst().error();
    String param = errors.isEmpty() ? null : errors.getFirst().field();
    return new ApiException(
        400, ErrorType.INVALID_REQUEST_ERROR, "validation_failed", first, param, null, errors);
  }

  public static ApiException unauthorized(String code, String message) {
    return new ApiException(401, ErrorType.AUTHENTICATION_ERROR, code, message, null, null, null);
  }

  public static ApiException forbidden(String code, String message) {
    return new ApiException(403, ErrorType.AUTHORIZATION_ERROR, code, message, null, null, null);
  }

  public static ApiException notFound(String message) {
    return new ApiException(
        404, ErrorType.INVALID_REQUEST_ERROR, "not_found", message, null, null, null);
  }

  /** 404 with a code of its own (a route, a model) and the parameter that named it. */
  public static ApiException notFound(String code, String param, String message) {
    return new ApiException(404, ErrorType.INVALID_REQUEST_ERROR, code, message, param, null, null);
  }

  public static ApiException conflict(String code, String message) {
    return conflict(code, null, message);
  }

  public static ApiException conflict(String code, String param, String message) {
    return new ApiException(409, ErrorType.INVALID_REQUEST_ERROR, code, message, param, null, null);
  }

  /** 412: the resource changed since the version the caller's If-Match names. */
  public static ApiException preconditionFailed(String message) {
    return new ApiException(
        412,
        ErrorType.INVALID_REQUEST_ERROR,
        "precondition_failed",
        message,
        "If-Match",
        null,
        null);
  }

  /** 501: the request is understood, but nothing in this server carries it out. */
  public static ApiException notImplemented(String code, String message) {
    return new ApiException(501, ErrorType.INVALID_REQUEST_ERROR, code, message, null, null, null);
  }

  public static ApiException rateLimited(String message, long retryAfterSeconds) {
    return rateLimited("rate_limit_exceeded", message, retryAfterSeconds);
  }

  /** 429 for a limit other than the request rate (concurrency, tokens, connections). */
  public static ApiException rateLimited(String code, String message, long retryAfterSeconds) {
    return new ApiException(
        429, ErrorType.RATE_LIMIT_ERROR, code, message, null, retryAfterSeconds, null);
  }

  public static ApiException unavailable(String code, String message) {
    return new ApiException(503, ErrorType.SERVER_ERROR, code, message, null, null, null);
  }

  /** 507: the server has no room to keep what the request sent. */
  public static ApiException insufficientStorage(String message) {
    return new ApiException(
        507, ErrorType.SERVER_ERROR, "insufficient_storage", message, null, null, null);
  }

  /**
   * Any other status, for failures whose status is data (an engine's failure kinds, the HTTP
   * container's own refusals); {@code retryAfterSeconds} may be null.
   */
  public static ApiException of(
      int status, ErrorType type, String code, String message, Long retryAfterSeconds) {
    return new ApiException(status, type, code, message, null, retryAfterSeconds, null);
  }

  public static ApiException internal() {
    return new ApiException(
        500,
        ErrorType.SERVER_ERROR,
        "internal_error",
        "The server failed to process the request; quote the X-Request-Id header when reporting it.",
        null,
        null,
        null);
  }

  /** The same failure told another way: {@code message} and {@code param} in place of its own. */
  public ApiException withMessage(String message, String param) {
    return new ApiException(
        status, type, code, message, param, retryAfterSeconds, validationErrors);
  }

  public int status() {
    return status;
  }

  public ErrorType type() {
    return type;
  }

  public String code() {
    return code;
  }

  public String param() {
    return param;
  }

  public Long retryAfterSeconds() {
    return retryAfterSeconds;
  }

  public List<ValidationError> validationErrors() {
    return validationErrors;
  }
}
