package io.engram.inference.call;

import io.engram.platform.tracing.Traces;
import io.opentelemetry.api.trace.Span;

/**
 * The request's span: what the client asked of its model once the call is ready (sampling with
 * the reply's room as resolved), and how it ended (tokens, why the model stopped, the deployment
 * and attempts, the cache, the cost, the memories), with the messages and the answer only where
 * the organization let contents into its traces ({@code traces.contents}).
 */
final class TraceStage implements Stage {
  @Override
  public Ended intercept(Chain chain) {
    ModelCall call = chain.call();
    if (call.request() != null) {
      GatewaySpans.asked(call.request(), call.modelId(), call.origin());
    }
    Ended ended = chain.proceed(chain.sink());
    Span span = Traces.request();
    if (!span.isRecording()) {
      return ended; // nothing to tell, and nothing allocated to tell it
    }
    if (call.kind() == ModelCall.Kind.EMBEDDINGS) {
      GatewaySpans.embedded(call.modelId(), ended.charged().promptTokens());
    } else {
      GatewaySpans.ended(span, call, ended);
    }
    if (ended.failedByService()) {
      Traces.failed(span, ended.code(), ended.failure().getMessage());
    }
    return ended;
  }
}
