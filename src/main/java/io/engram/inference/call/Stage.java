package io.engram.inference.call;

/**
 * One step around a model's call, as OkHttp's interceptors are around an HTTP exchange. {@link
 * ModelCalls} lists them in order, outermost first; the engine's call ends the chain. A stage
 * sees a call twice: while it is prepared, before the response's head is written (so the memory
 * block and the cache's verdict can still be told in headers), and around the rest of the chain,
 * from which it gets one {@link Ended} whichever way the call ended.
 */
public interface Stage {
  /** Fills in what the stage adds to the call before it is answered (default: nothing). */
  default void prepare(ModelCall call) {}

  /**
   * Runs the rest of the chain ({@code chain.proceed}) or answers instead of it (the cache), and
   * returns how the call ended, having done with it what the stage does.
   */
  default Ended intercept(Chain chain) {
    return chain.proceed(chain.sink());
  }
}
