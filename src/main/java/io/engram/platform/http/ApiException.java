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

  public ApiException(int status, ErrorType type, String code, String message, String param,
                      Long retryAfterSeconds, List<ValidationError> validationErrors) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
    this.retryAfterSeconds = retryAfterSeconds;
    this.validationErrors = validationErrors == null ? List.of() : List.copyOf(validationErrors);
  }

  public static ApiException badRequest(String param, String message) {
    return new ApiException(400, ErrorType.INVALID_REQUEST_ERROR, "invalid_request", message, param, null, null);
  }

  public static ApiException validation(List<ValidationError> errors) {
    String first = errors.isEmpty() ? "Validation failed" : errors.getFirst().error();
    String param = errors.isEmpty() ? null : errors.getFirst().field();
    return new ApiException(400, ErrorType.INVALID_REQUEST_ERROR, "validation_failed", first, param, null, errors);
  }

  public static ApiException unauthorized(String code, String message) {
    return new ApiException(401, ErrorType.AUTHENTICATION_ERROR, code, message, null, null, null);
  }

  public static ApiException forbidden(String code, String message) {
    return new ApiException(403, ErrorType.AUTHORIZATION_ERROR, code, message, null, null, null);
  }

  public static ApiException notFound(String message) {
    return new ApiException(404, ErrorType.INVALID_REQUEST_ERROR, "not_found", message, null, null, null);
  }

  public static ApiException conflict(String code, String message) {
    return new ApiException(409, ErrorType.INVALID_REQUEST_ERROR, code, message, null, null, null);
  }

  /** 412: the resource changed since the version the caller's If-Match names. */
  public static ApiException preconditionFailed(String message) {
    return new ApiException(412, ErrorType.INVALID_REQUEST_ERROR, "precondition_failed", message, "If-Match", null,
        null);
  }

  /** 501: the request is understood, but nothing in this server carries it out. */
  public static ApiException notImplemented(String code, String message) {
    return new ApiException(501, ErrorType.INVALID_REQUEST_ERROR, code, message, null, null, null);
  }

  public static ApiException rateLimited(String message, long retryAfterSeconds) {
    return new ApiException(429, ErrorType.RATE_LIMIT_ERROR, "rate_limit_exceeded", message, null,
        retryAfterSeconds, null);
  }

  public static ApiException unavailable(String code, String message) {
    return new ApiException(503, ErrorType.SERVER_ERROR, code, message, null, null, null);
  }

  public static ApiException internal() {
    return new ApiException(500, ErrorType.SERVER_ERROR, "internal_error",
        "The server failed to process the request; quote the X-Request-Id header when reporting it.", null, null, null);
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
