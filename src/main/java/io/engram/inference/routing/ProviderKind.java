package io.engram.inference.routing;

import java.util.Arrays;
import java.util.Optional;

/**
 * The API a provider speaks. {@code openai}: any server with OpenAI's API (OpenAI itself, vLLM,
 * llama.cpp, Ollama, a hosted API); {@code azure_openai}: Azure OpenAI, whose paths name the
 * deployment and an {@code api-version} and whose key goes in an {@code api-key} header; {@code
 * anthropic}: Anthropic's Messages API (base URL such as https://api.anthropic.com/v1); {@code
 * gemini}: Google's Gemini API (base URL such as
 * https://generativelanguage.googleapis.com/v1beta).
 */
public enum ProviderKind {
  OPENAI("openai"),
  AZURE_OPENAI("azure_openai"),
  ANTHROPIC("anthropic"),
  GEMINI("gemini");

  private final String wireName;

  ProviderKind(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Optional<ProviderKind> of(String wireName) {
    return Arrays.stream(values()).filter(k -> k.wireName.equals(wireName)).findFirst();
  }

  public static String names() {
    return String.join(", ", Arrays.stream(values()).map(ProviderKind::wireName).toList());
  }
}
