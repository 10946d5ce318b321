package io.engram.inference.call;

import io.engram.inference.engine.TokenSink;
import java.util.List;

/** The rest of a call's stages, as one stage sees them: the call, the sink, and what comes next. */
public final class Chain {
  /** The step that ends every chain: the engine's call (a generation's or the embedder's). */
  public interface Answering {
    Ended answer(ModelCall call, TokenSink sink);
  }

  private final List<Stage> stages;
  private final int next;
  private final ModelCall call;
  private final TokenSink sink;
  private final Answering answering;

  Chain(List<Stage> stages, int next, ModelCall call, TokenSink sink, Answering answering) {
    this.stages = stages;
    this.next = next;
    this.call = call;
    this.sink = sink;
    this.answering = answering;
  }

  public ModelCall call() {
    return call;
  }

  /** Where the answer goes, as the stages before this one left it. */
  public TokenSink sink() {
    return sink;
  }

  /** Runs the next stage, or the engine after the last, delivering to {@code sink}. */
  public Ended proceed(TokenSink sink) {
    if (next == stages.size()) {
      return answering.answer(call, sink);
    }
    return stages.get(next).intercept(new Chain(stages, next + 1, call, sink, answering));
  }
}
