package io.engram.inference.call;

import io.engram.access.Principal;
import io.engram.guardrails.Guardrails;
import io.engram.inference.engine.Embeds;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.inference.usage.BilledTokens;
import io.engram.inference.usage.RequestLog;
import io.engram.inference.usage.UsageLedger;
import io.engram.instances.storage.ConversationHistory;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryReads;
import io.engram.platform.http.ApiException;
import io.engram.platform.net.Egress;
import java.util.List;
import java.util.function.Supplier;

/**
 * Runs model calls through their stages: every chat (streamed or not, over HTTP or a WebSocket,
 * an assistant's tool loop step by step), completion, Responses and Messages call and embeddings
 * go through the one list below, outermost first, and end at their engine. A new concern around a
 * model call is one more stage in this list.
 */
public final class ModelCalls {
  private static final Generation.Usage NOTHING = new Generation.Usage(0, 0);

  /** Embeddings stream nothing to their client: the vectors are the answer. */
  private static final TokenSink NO_STREAM = new TokenSink() {
    @Override
    public void begin() {}

    @Override
    public void text(String piece) {}
  };

  private final RequestLogStage requestLog;
  private final List<Stage> stages;
  private final EngineCall engine;

  public ModelCalls(
      MemoryReads memory,
      ResponseCache cache,
      RequestLog requests,
      UsageLedger usage,
      ConversationHistory history,
      Egress egress,
      InferenceMetrics metrics,
      BilledTokens billedTokens,
      Guardrails guardrails) {
    this.requestLog = new RequestLogStage(requests);
    this.stages = List.of(
        new TraceStage(),
        requestLog,
        new SettlementStage(usage, metrics, billedTokens),
        new HistoryStage(history),
        new GuardrailStage(guardrails),
        new MemoryContext(memory, guardrails),
        new CacheStage(cache, metrics));
    this.engine = new EngineCall(egress, metrics);
  }

  /**
   * Admits a call ({@code admit}: its limits and budgets, as the "limits" span), or keeps the
   * refusal in the request log before the client gets it.
   */
  public <T> T admit(
      Principal caller, String modelId, Origin origin, String requestId, Supplier<T> admit) {
    try {
      return GatewaySpans.limits(admit);
    } catch (ApiException refused) {
      requestLog.refused(caller, modelId, origin, requestId, refused, List.of());
      throw refused;
    }
  }

  /** The request log's clock, in epoch milliseconds: when a call is said to have started. */
  public long now() {
    return requestLog.now();
  }

  /**
   * Lets each stage fill the call in (the memory block, then the cache's verdict), in order; a
   * refusal on the way (an input guardrail's block, a context the memory block overflows) is kept
   * in the request log with the guardrails that fired before the client gets it.
   */
  public void prepare(ModelCall call) {
    try {
      for (Stage stage : stages) {
        stage.prepare(call);
      }
    } catch (ApiException refused) {
      GatewaySpans.guardrails(io.engram.platform.tracing.Traces.request(), call);
      requestLog.refused(
          call.caller(),
          call.modelId(),
          call.origin(),
          call.origin().recordId(call.requestId()),
          refused,
          call.guardrails());
      throw refused;
    }
  }

  /**
   * Runs a chat or completion on its engine, delivering to {@code sink}; where a {@code restore}
   * guardrail redacted the input, the client gets its originals back at the very edge.
   */
  public Outcome generate(ModelCall call, TokenSink sink) {
    java.util.Map<String, String> originals = call.placeholders().restorable();
    if (originals.isEmpty()) {
      return run(call, sink, engine).outcome();
    }
    RestoringSink restoring = new RestoringSink(sink, originals);
    return restoring.finish(run(call, restoring, engine).outcome());
  }

  /** Runs an embeddings call on {@code embed}: the in-process model or the provider's API. */
  public Embedder.Embeddings embed(ModelCall call, Supplier<Embeds.Vectors> embed) {
    return run(call, NO_STREAM, (embedding, sink) -> embedded(embedding, embed)).embeddings();
  }

  /** Every stage sees how the call ended; then a failure goes on to the caller. */
  private Ended run(ModelCall call, TokenSink sink, Chain.Answering answering) {
    Ended ended = new Chain(stages, 0, call, sink, answering).proceed(sink);
    if (ended.failure() != null) {
      throw ended.failure();
    }
    return ended;
  }

  /** The provider's count of the tokens when it gives one, else the gateway's. */
  private static Ended embedded(ModelCall call, Supplier<Embeds.Vectors> embed) {
    long started = System.nanoTime();
    try {
      Embeds.Vectors vectors = embed.get();
      int tokens = vectors.tokens() >= 0 ? vectors.tokens() : call.promptTokens();
      Generation.Usage used = new Generation.Usage(tokens, 0);
      String deployment = vectors.deployment() == null ? "" : vectors.deployment();
      return Ended.answered(
          null,
          new Embedder.Embeddings(vectors.vectors(), tokens),
          used,
          EngineCall.cost(call, used),
          Ended.EngineRun.endingNow(deployment, 1, started, 0));
    } catch (RuntimeException e) {
      return Ended.failed(e, NOTHING, 0, Ended.EngineRun.endingNow("", 1, started, 0));
    }
  }
}
