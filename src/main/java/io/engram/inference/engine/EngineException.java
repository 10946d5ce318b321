package io.engram.inference.engine;

import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorType;

/**
 * An engine could not answer. Each failure maps to one status and one of the spec's error types
 * (docs/inference.md has the table): the caller learns whether to fix its request, retry later, or
 * tell the operator.
 */
public final class EngineException extends RuntimeException {

  public enum Failure {
    /** The upstream could not be reached. */
    UNAVAILABLE(503, ErrorType.SERVER_ERROR, "upstream_unavailable"),
    /** No answer, or no progress in a stream, within REQUEST_TIMEOUT. */
    TIMEOUT(504, ErrorType.SERVER_ERROR, "upstream_timeout"),
    /** The upstream refused the request as invalid (its 400/422). */
    REJECTED(400, ErrorType.INVALID_REQUEST_ERROR, "upstream_rejected"),
    /** The upstream failed (its 5xx) or sent an error in the stream. */
    UPSTREAM_ERROR(502, ErrorType.MODEL_ERROR, "upstream_error"),
    /** The upstream is rate limiting this gateway. */
    RATE_LIMITED(429, ErrorType.RATE_LIMIT_ERROR, "upstream_rate_limited"),
    /** The upstream refused this gateway's key or does not know the configured model: an operator problem. */
    MISCONFIGURED(502, ErrorType.SERVER_ERROR, "upstream_misconfigured"),
    /** The upstream's stream ended before the generation finished. */
    CUT(502, ErrorType.MODEL_ERROR, "upstream_stream_cut"),
    /** The upstream answered something that is not an OpenAI-compatible response. */
    MALFORMED(502, ErrorType.MODEL_ERROR, "upstream_malformed_response"),
    /** The local model failed while generating. */
    MODEL_FAILED(500, ErrorType.MODEL_ERROR, "model_error"),
    /** The local model could not be loaded. */
    MODEL_UNAVAILABLE(503, ErrorType.MODEL_ERROR, "model_unavailable");

    private final int status;
    private final ErrorType type;
    private final String code;

    Failure(int status, ErrorType type, String code) {
      this.status = status;
      this.type = type;
      this.code = code;
    }

    /** The error code clients see, also the outcome label of the generation metrics. */
    public String code() {
      return code;
    }
  }

  private final Failure failure;
  private final Long retryAfterSeconds;

  public EngineException(Failure failure, String message) {
    this(failure, message, null, null);
  }

  public EngineException(Failure failure, String message, Long retryAfterSeconds, Throwable cause) {
    super(message, cause);
    this.failure = failure;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  public Failure failure() {
    return failure;
  }

  /** How long the upstream asked to wait (its Retry-After), in seconds; null when it did not say. */
  public Long retryAfterSeconds() {
    return retryAfterSeconds;
  }

  public ApiException toApiException() {
    Long retry = failure == Failure.RATE_LIMITED && retryAfterSeconds == null
        ? Long.valueOf(1)
        : retryAfterSeconds;
    return ApiException.of(failure.status, failure.type, failure.code, getMessage(), retry);
  }
}
