package io.engram.inference.call;

import io.engram.inference.engine.GenAiSpans;
import io.engram.inference.engine.GenerationRequest;
import io.engram.platform.http.ApiException;
import io.engram.platform.tracing.Traces;
import io.engram.settings.ConfigField;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import java.util.List;
import java.util.function.Supplier;

/**
 * What an inference request's span says of it: the GenAI conventions' attributes as the client
 * asked (its model, its sampling) and as it ended (tokens, finish reason), and Engram's own (the
 * deployment and attempts, the cache, the cost, the memories that went into it, and the messages
 * and answer where the organization let contents into its traces); and the steps it took inside
 * the gateway, each its own span (the limits it passed, its memory, its response).
 */
public final class GatewaySpans {
  static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("engram.attempts");
  static final AttributeKey<String> CACHE = AttributeKey.stringKey("engram.cache");
  static final AttributeKey<Double> COST = AttributeKey.doubleKey("engram.cost_usd");
  static final AttributeKey<List<String>> MEMORY_IDS =
      AttributeKey.stringArrayKey("engram.memory.ids");
  static final AttributeKey<Long> MEMORY_TOKENS = AttributeKey.longKey("engram.memory.tokens");
  static final AttributeKey<String> ASSISTANT = AttributeKey.stringKey("engram.assistant.id");
  static final AttributeKey<String> AGENT = AttributeKey.stringKey("engram.agent");
  static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("engram.stream");
  /** Each guardrail that fired: {@code id:phase:action} (never what it found). */
  static final AttributeKey<List<String>> GUARDRAILS =
      AttributeKey.stringArrayKey("engram.guardrails");

  static final AttributeKey<List<String>> LEFT_OUT =
      AttributeKey.stringArrayKey("engram.memory.left_out");

  private static final double NANOS_PER_DOLLAR = 1e9;

  private GatewaySpans() {}

  /**
   * The request's limits and budgets, as its "limits" span: what {@code admit} lets through, or
   * the refusal (its code as the span's error type).
   */
  public static <T> T limits(Supplier<T> admit) {
    Span limits = Traces.span("limits");
    try {
      return admit.get();
    } catch (ApiException refused) {
      Traces.failed(limits, refused.code(), refused.getMessage());
      throw refused;
    } finally {
      limits.end();
    }
  }

  /** What the client asked: the operation on its model (its id at Engram), and the sampling. */
  static void asked(GenerationRequest request, String clientModel, Origin origin) {
    Span span = Traces.request();
    if (!span.isRecording()) {
      return;
    }
    GenAiSpans.asked(span, request, clientModel);
    span.setAttribute(STREAM, request.stream());
    if (origin.assistantId() != null) {
      span.setAttribute(ASSISTANT, origin.assistantId());
    }
    if (origin.agent() != null) {
      span.setAttribute(AGENT, origin.agent());
    }
  }

  /**
   * How the call ended: tokens charged, why the model stopped (none: it did not finish), which
   * deployment answered in how many attempts, the cache, the cost, the memories; with the
   * messages and the answer where the organization let contents into its traces.
   */
  static void ended(Span span, ModelCall call, Ended ended) {
    GenAiSpans.answered(
        span,
        ended.outcome() == null ? null : ended.outcome().generation().finishReason(),
        ended.charged());
    String deployment = ended.run().deployment();
    if (!deployment.isEmpty()) {
      span.setAttribute(GenAiSpans.DEPLOYMENT, deployment);
    }
    span.setAttribute(ATTEMPTS, (long) ended.run().attempts());
    if (call.cache().status() != null) {
      span.setAttribute(CACHE, call.cache().status());
    }
    span.setAttribute(COST, ended.costNanos() / NANOS_PER_DOLLAR);
    if (!call.memory().isEmpty()) {
      span.setAttribute(MEMORY_IDS, call.memoryIds());
      span.setAttribute(MEMORY_TOKENS, (long) call.memoryTokens());
    }
    guardrails(span, call);
    if (call.config() != null && call.config().switchedOn(ConfigField.TRACES_CONTENTS)) {
      span.setAttribute(GenAiSpans.INPUT_MESSAGES, call.sent());
      if (ended.answer() != null) {
        span.setAttribute(GenAiSpans.OUTPUT_MESSAGES, ended.answer());
      }
    }
  }

  /** The guardrails that fired on the call and the memories they left out, when any did. */
  static void guardrails(Span span, ModelCall call) {
    List<io.engram.guardrails.Screening.Firing> fired = call.guardrails();
    if (!fired.isEmpty() && span.isRecording()) {
      span.setAttribute(
          GUARDRAILS,
          fired.stream()
              .map(f ->
                  f.guardrail().id() + ":" + f.phase().id() + ":" + f.action().id())
              .toList());
    }
    if (!call.leftOutMemories().isEmpty() && span.isRecording()) {
      span.setAttribute(LEFT_OUT, call.leftOutMemories());
    }
  }

  /** An embeddings request: the model and the input tokens it was charged. */
  static void embedded(String model, int tokens) {
    Span span = Traces.request();
    if (span.isRecording()) {
      span.setAttribute(GenAiSpans.OPERATION, GenAiSpans.EMBEDDINGS);
      span.setAttribute(GenAiSpans.REQUEST_MODEL, model);
      span.setAttribute(GenAiSpans.INPUT_TOKENS, (long) tokens);
    }
  }

  /** The response's span: from the answer's first byte to the client until the request ends. */
  static Span response() {
    return Traces.untilRequestEnds("response");
  }
}
