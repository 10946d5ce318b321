package io.engram.inference.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.List;

/**
 * What an engine is asked to do: continue a conversation ({@code messages}) or a plain prompt
 * ({@code prompt}, for /v1/completions), with resolved sampling (max tokens always set).
 * {@code model} is the engine's own name for the model, which may differ from the client-facing id.
 * {@code timeout} is the caller's organization's REQUEST_TIMEOUT (null: the engine's own): the
 * longest wait for a model's answer and the longest silence inside it. {@code tooling} holds the
 * request's {@code tools}, {@code tool_choice}, {@code parallel_tool_calls} and structured
 * {@code response_format}, and {@code n}, {@code logprobs}, {@code top_logprobs} and {@code
 * logit_bias}, as the client sent them, for engines that {@link Engine#carries};
 * null when the request has none. {@code orgId} is the organization the request runs for (null:
 * none, such as a trainer's check): an engine that calls out admits each call through its
 * outbound firewall. {@code share} is what of an in-process engine the organization may hold.
 * {@code dropsUnsupported}: the organization's DROP_PARAMS; a provider's API that cannot carry a
 * part of the request is then sent the request without it, else it is not sent the request.
 */
public record GenerationRequest(
    String model,
    List<ChatMessage> messages,
    String prompt,
    Sampling sampling,
    boolean stream,
    String user,
    Duration timeout,
    ObjectNode tooling,
    String orgId,
    Share share,
    boolean dropsUnsupported) {

  /**
   * An organization's share of an in-process engine: how many of a model's workers
   * (WORKER_PROCESSES) its generations may hold at once.
   */
  public record Share(int workers) {
    public static final Share WHOLE = new Share(Integer.MAX_VALUE);
  }

  /** The same request with another timeout: one attempt's share of the request's time. */
  public GenerationRequest within(Duration attemptTimeout) {
    return new GenerationRequest(
        model,
        messages,
        prompt,
        sampling,
        stream,
        user,
        attemptTimeout,
        tooling,
        orgId,
        share,
        dropsUnsupported);
  }

  /** The same request with another sampling (max_tokens filled in). */
  public GenerationRequest withSampling(Sampling resolved) {
    return new GenerationRequest(
        model,
        messages,
        prompt,
        resolved,
        stream,
        user,
        timeout,
        tooling,
        orgId,
        share,
        dropsUnsupported);
  }

  /** The same chat with other messages and tooling (the memory block ahead, a tool loop's step). */
  public GenerationRequest withMessages(List<ChatMessage> other, ObjectNode otherTooling) {
    return new GenerationRequest(
        model,
        other,
        prompt,
        sampling,
        stream,
        user,
        timeout,
        otherTooling,
        orgId,
        share,
        dropsUnsupported);
  }

  /** The same completion with another prompt (redacted by a guardrail). */
  public GenerationRequest withPrompt(String other) {
    return new GenerationRequest(
        model,
        messages,
        other,
        sampling,
        stream,
        user,
        timeout,
        tooling,
        orgId,
        share,
        dropsUnsupported);
  }

  public boolean isChat() {
    return prompt == null;
  }

  /**
   * Whether the request asked for several choices or their log probabilities: the engine then
   * hands on every choice of its model's answer whole ({@link Generation#choices}, {@link
   * TokenSink#choice}), not only the first one's text.
   */
  public boolean relaysChoices() {
    return tooling != null && (tooling.has("n") || tooling.has("logprobs"));
  }
}
