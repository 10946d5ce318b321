package io.engram.guardrails;

import java.util.List;

/**
 * Whose requests a guardrail covers: the API keys, context tokens, assistants and models it names
 * (a list left empty covers every one of its kind); a request is covered when it matches every
 * list that is not empty.
 */
public record GuardrailScope(
    List<String> apiKeys, List<String> tokens, List<String> assistants, List<String> models) {
  public static final GuardrailScope EVERYONE =
      new GuardrailScope(List.of(), List.of(), List.of(), List.of());

  public GuardrailScope {
    apiKeys = List.copyOf(apiKeys);
    tokens = List.copyOf(tokens);
    assistants = List.copyOf(assistants);
    models = List.copyOf(models);
  }

  /**
   * Whether a request of {@code credentialId} (an API key when {@code apiKey}, else a context
   * token; null for none), as {@code assistantId} (null: none), on {@code model} (null: not a model
   * call, such as a memory write) is covered. Assistants and models narrow model calls only: a
   * memory write is covered by its credential alone; a chat not as an assistant is not covered by
   * a guardrail that names assistants.
   */
  public boolean covers(String credentialId, boolean apiKey, String assistantId, String model) {
    boolean credentials = apiKeys.isEmpty() && tokens.isEmpty()
        || (credentialId != null && (apiKey ? apiKeys : tokens).contains(credentialId));
    if (!credentials || model == null) {
      return credentials;
    }
    return (assistants.isEmpty() || (assistantId != null && assistants.contains(assistantId)))
        && (models.isEmpty() || models.contains(model));
  }
}
