package io.engram.platform.http;

/**
 * Routes come in two families with their own error shapes: the product routes under {@code /api}
 * ({@code {success:false, error, message}}) and everything else, the OpenAI-style and memory
 * routes under {@code /v1} ({@code {error:{message, type, code, param}}}).
 */
public enum RouteFamily {
  PRODUCT,
  OPENAI;

  public static RouteFamily of(String path) {
    return path.equals("/api") || path.startsWith("/api/") ? PRODUCT : OPENAI;
  }
}
