package io.engram.inference;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.Sampling;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.util.Map;
import java.util.Set;

/**
 * A validated /v1/completions request (the extended surface's plain prompt completion). A prompt
 * is a string, or a list holding one string as OpenAI's clients may send it; several prompts, echo,
 * best_of and suffix are refused by name.
 */
public record CompletionRequest(
    String model,
    String prompt,
    Sampling sampling,
    boolean stream,
    boolean includeUsage,
    String user) {
  public static final int MAX_PROMPT = 1_000_000;

  /** The same completion with other sampling (its reply's limit lowered, say). */
  CompletionRequest withSampling(Sampling changed) {
    return changed == sampling
        ? this
        : new CompletionRequest(model, prompt, changed, stream, includeUsage, user);
  }

  static final Set<String> FIELDS = ChatRequest.fields(
      "model",
      "prompt",
      "stream",
      "stream_options",
      "n",
      "user",
      "logprobs",
      "logit_bias",
      "echo",
      "best_of");

  static final Map<String, String> UNSUPPORTED =
      Map.of("suffix", "insertion (suffix) is not supported by this gateway");

  public static CompletionRequest parse(JsonBody body) {
    ChatRequest.refuseUnsupported(body, UNSUPPORTED);
    body.allowOnly(FIELDS);
    // Left out, DEFAULT_MODEL as in force for the caller's organization applies (Gateway).
    String model = body.optionalString("model", ChatRequest.MAX_MODEL_ID).orElse(null);
    String prompt = prompt(body.get("prompt"));
    ChatRequest.onlyAt(
        body, "n", ChatRequest.ONE, "'n' must be 1: this gateway returns one choice per request");
    ChatRequest.onlyAt(body, "best_of", ChatRequest.ONE, "'best_of' must be 1 on this gateway");
    ChatRequest.onlyAt(
        body,
        "echo",
        ChatRequest.FALSE,
        "'echo' is not supported by this gateway (only false is accepted)");
    ChatRequest.onlyAt(
        body,
        "logprobs",
        v -> v.isIntegralNumber() && v.asLong() == 0,
        "log probabilities are not supported by this gateway");
    ChatRequest.onlyAt(
        body,
        "logit_bias",
        ChatRequest.EMPTY_OBJECT,
        "'logit_bias' is not supported by this gateway (only {} is accepted)");
    boolean stream = body.optionalBoolean("stream").orElse(false);
    boolean includeUsage = ChatRequest.streamOptions(body, stream);
    String user = body.optionalString("user", ChatRequest.MAX_USER).orElse(null);
    return new CompletionRequest(model, prompt, Sampling.parse(body), stream, includeUsage, user);
  }

  private static String prompt(JsonNode value) {
    if (value == null) {
      throw ApiException.badRequest("prompt", "'prompt' is required");
    }
    JsonNode text = value.isArray() && value.size() == 1 ? value.get(0) : value;
    if (value.isArray() && value.size() != 1) {
      throw ChatRequest.unsupported(
          "prompt", "'prompt' must be a string (or a list of exactly one string)");
    }
    if (!text.isTextual() || text.asText().isEmpty()) {
      throw ApiException.badRequest("prompt", "'prompt' must be a non-empty string");
    }
    if (text.asText().length() > MAX_PROMPT) {
      throw ApiException.badRequest(
          "prompt", "'prompt' must be at most " + MAX_PROMPT + " characters");
    }
    return text.asText();
  }
}
