package io.engram.platform.http;

/**
 * Routes come in families with their own error shapes: the product routes under {@code /api}
 * ({@code {success:false, error, message}}), Anthropic's Messages API at {@code /v1/messages}
 * ({@code {type: error, error:{type, message, code, param}}}, the shape Anthropic's clients read),
 * and everything else, the OpenAI-style and memory routes under {@code /v1} ({@code
 * {error:{message, type, code, param}}}).
 */
public enum RouteFamily {
  PRODUCT,
  ANTHROPIC,
  OPENAI;

  public static RouteFamily of(String path) {
    if (path.equals("/api") || path.startsWith("/api/")) {
      return PRODUCT;
    }
    return path.equals("/v1/messages") || path.startsWith("/v1/messages/") ? ANTHROPIC : OPENAI;
  }
}
