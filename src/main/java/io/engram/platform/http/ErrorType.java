package io.engram.platform.http;

/** The spec's error types, written in {@code error.type} on the OpenAI-style routes. */
public enum ErrorType {
  AUTHENTICATION_ERROR,
  AUTHORIZATION_ERROR,
  INVALID_REQUEST_ERROR,
  RATE_LIMIT_ERROR,
  MODEL_ERROR,
  SERVER_ERROR;

  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
