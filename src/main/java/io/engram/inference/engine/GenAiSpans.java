package io.engram.inference.engine;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import java.util.List;

/**
 * The attributes OpenTelemetry's semantic conventions for generative AI give a model call
 * ({@code gen_ai.*}), set from the gateway's own records of a request: what was asked of which
 * model, what it answered with, how many tokens it took.
 */
public final class GenAiSpans {
  public static final AttributeKey<String> OPERATION =
      AttributeKey.stringKey("gen_ai.operation.name");
  public static final AttributeKey<String> PROVIDER =
      AttributeKey.stringKey("gen_ai.provider.name");
  public static final AttributeKey<String> REQUEST_MODEL =
      AttributeKey.stringKey("gen_ai.request.model");
  public static final AttributeKey<Long> MAX_TOKENS =
      AttributeKey.longKey("gen_ai.request.max_tokens");
  public static final AttributeKey<Double> TEMPERATURE =
      AttributeKey.doubleKey("gen_ai.request.temperature");
  public static final AttributeKey<Double> TOP_P = AttributeKey.doubleKey("gen_ai.request.top_p");
  public static final AttributeKey<Long> INPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.input_tokens");
  public static final AttributeKey<Long> OUTPUT_TOKENS =
      AttributeKey.longKey("gen_ai.usage.output_tokens");
  public static final AttributeKey<List<String>> FINISH_REASONS =
      AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
  /** The messages sent, as JSON: only where the organization let contents into its traces. */
  public static final AttributeKey<String> INPUT_MESSAGES =
      AttributeKey.stringKey("gen_ai.input.messages");
  /** The answer: only where the organization let contents into its traces. */
  public static final AttributeKey<String> OUTPUT_MESSAGES =
      AttributeKey.stringKey("gen_ai.output.messages");

  public static final AttributeKey<String> SERVER_ADDRESS =
      AttributeKey.stringKey("server.address");
  public static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");

  /** Engram's own: the deployment of a routed model that took the call, and which attempt it was. */
  public static final AttributeKey<String> DEPLOYMENT = AttributeKey.stringKey("engram.deployment");

  public static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("engram.attempt");

  public static final String CHAT = "chat";
  public static final String TEXT_COMPLETION = "text_completion";
  public static final String EMBEDDINGS = "embeddings";

  private GenAiSpans() {}

  /** The operation a generation is: a chat, or a plain prompt's completion. */
  public static String operation(GenerationRequest request) {
    return request.isChat() ? CHAT : TEXT_COMPLETION;
  }

  /** What a generation asks of {@code model}: the operation, the model, its sampling. */
  public static void asked(Span span, GenerationRequest request, String model) {
    if (!span.isRecording()) {
      return;
    }
    span.setAttribute(OPERATION, operation(request));
    span.setAttribute(REQUEST_MODEL, model);
    Sampling sampling = request.sampling();
    if (sampling.maxTokens() != null) {
      span.setAttribute(MAX_TOKENS, sampling.maxTokens().longValue());
    }
    span.setAttribute(TEMPERATURE, sampling.temperature());
    span.setAttribute(TOP_P, sampling.topP());
  }

  /** What the model answered: why it stopped and the tokens it was charged (null: unknown). */
  public static void answered(Span span, String finishReason, Generation.Usage usage) {
    if (!span.isRecording()) {
      return;
    }
    if (finishReason != null) {
      span.setAttribute(FINISH_REASONS, List.of(finishReason));
    }
    if (usage != null) {
      span.setAttribute(INPUT_TOKENS, (long) usage.promptTokens());
      span.setAttribute(OUTPUT_TOKENS, (long) usage.completionTokens());
    }
  }
}
