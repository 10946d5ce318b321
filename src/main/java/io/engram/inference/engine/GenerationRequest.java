package io.engram.inference.engine;

import java.time.Duration;
import java.util.List;

/**
 * What an engine is asked to do: continue a conversation ({@code messages}) or a plain prompt
 * ({@code prompt}, for /v1/completions), with resolved sampling (max tokens always set).
 * {@code model} is the engine's own name for the model, which may differ from the client-facing id.
 * {@code timeout} is the caller's organization's REQUEST_TIMEOUT (null: the engine's own): the
 * longest wait for a model's answer and the longest silence inside it.
 */
public record GenerationRequest(
    String model,
    List<ChatMessage> messages,
    String prompt,
    Sampling sampling,
    boolean stream,
    String user,
    Duration timeout) {

  public boolean isChat() {
    return prompt == null;
  }
}
