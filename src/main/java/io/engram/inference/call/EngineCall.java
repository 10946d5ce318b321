package io.engram.inference.call;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.Engine;
import io.engram.inference.engine.ForwardingSink;
import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.platform.TokenCounter;
import io.engram.platform.http.ApiException;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.opentelemetry.api.trace.Span;

/**
 * The end of a generation's chain: the engine's call, through the organization's outbound
 * firewall, timed and counted in flight. Whatever the engine does, it returns how the call ended
 * with the tokens it used: the engine's own count when it gave one, else the gateway's
 * (cl100k_base over what was sent and received); when the answer broke off or the client left,
 * the prompt and what was delivered; when it failed before any output, nothing.
 */
final class EngineCall implements Chain.Answering {
  private final Egress egress;
  private final InferenceMetrics metrics;

  EngineCall(Egress egress, InferenceMetrics metrics) {
    this.egress = egress;
    this.metrics = metrics;
  }

  @Override
  public Ended answer(ModelCall call, TokenSink sink) {
    String model = call.modelId();
    admitOutbound(call, call.model().engine(), model);
    long started = System.nanoTime();
    Recording recording = new Recording(sink, model, started);
    metrics.started();
    try {
      Generation generation = call.model().engine().generate(call.request(), recording);
      metrics.generation(model, "completed", System.nanoTime() - started);
      Generation.Usage counted = generation.usage() != null
          ? generation.usage()
          : new Generation.Usage(call.promptTokens(), TokenCounter.count(generation.text()));
      return Ended.answered(
          new Outcome(generation, counted), null, counted, cost(call, counted), recording.run());
    } catch (RuntimeException e) {
      Generation.Usage used = recording.delivered.isEmpty() && !(e instanceof ClientGoneException)
          ? new Generation.Usage(0, 0)
          : new Generation.Usage(
              call.promptTokens(), TokenCounter.count(recording.delivered.toString()));
      Ended ended = Ended.failed(e, used, cost(call, used), recording.run());
      metrics.generation(model, ended.code(), System.nanoTime() - started);
      return ended;
    } finally {
      metrics.ended();
    }
  }

  static long cost(ModelCall call, Generation.Usage used) {
    return call.pricing().costNanos(used.promptTokens(), used.completionTokens());
  }

  /**
   * An engine that calls out goes through the organization's outbound firewall first: a blocked
   * destination fails the request at once, naming the rule, before anything is sent.
   */
  private void admitOutbound(ModelCall call, Engine engine, String model) {
    engine.origin().ifPresent(origin -> {
      try {
        egress.admit(call.caller().orgId(), origin);
      } catch (OutboundBlocked e) {
        metrics.generation(model, "outbound_blocked", 0);
        throw ApiException.forbidden("outbound_blocked", e.getMessage());
      }
    });
  }

  /**
   * The client's sink, noting what reached the client (charged if the generation does not end)
   * and which deployment answered (the usage is recorded under it), and timing the first token.
   */
  private final class Recording extends ForwardingSink {
    private final String model;
    private final long started;
    final StringBuilder delivered = new StringBuilder();
    String deployment = "";
    int attempts = 1;
    long firstTokenNanos;

    /** The response's span, from the answer's first byte to the client (null: not begun). */
    private Span response;

    Recording(TokenSink sink, String model, long started) {
      super(sink);
      this.model = model;
      this.started = started;
    }

    Ended.EngineRun run() {
      return Ended.EngineRun.endingNow(deployment, attempts, started, firstTokenNanos);
    }

    @Override
    public void begin() {
      if (response == null) {
        response = GatewaySpans.response();
      }
      sink.begin();
    }

    @Override
    public void answeredBy(String answering, int attempts) {
      deployment = answering;
      this.attempts = attempts;
      sink.answeredBy(answering, attempts);
    }

    private void firstToken() {
      if (firstTokenNanos == 0) {
        firstTokenNanos = System.nanoTime();
        metrics.firstToken(model, firstTokenNanos - started);
        if (response != null) {
          response.addEvent("first_token");
        }
      }
    }

    @Override
    public void text(String piece) {
      firstToken();
      delivered.append(piece);
      sink.text(piece);
    }

    @Override
    public void toolCalls(JsonNode deltas) {
      delivered.append(deltas); // counted as delivered output if the stream is cut
      sink.toolCalls(deltas);
    }

    @Override
    public void choice(JsonNode choice) {
      firstToken();
      delivered.append(choice.path("delta").path("content").asText(""));
      sink.choice(choice);
    }
  }
}
