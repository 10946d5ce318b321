package io.engram.inference.call;

import io.engram.inference.engine.ClientGoneException;
import io.engram.inference.engine.EngineException;
import io.engram.inference.engine.Generation;
import io.engram.memory.Embedder;
import io.engram.platform.http.ApiException;

/**
 * How a model call ended, as every stage sees it: answered by its engine, replayed from the
 * response cache, failed, or cut short because the client went away. One value for every path,
 * so a stage says once what it does with each, instead of a path repeating every stage's calls.
 *
 * @param outcome what the client gets (null when it failed, and for embeddings)
 * @param embeddings the vectors of an embeddings call (null otherwise)
 * @param charged the tokens the organization is charged: the whole usage when answered, the prompt
 *     and what was delivered when the answer broke off or the client left, nothing when it failed
 *     before any output (a provider's failure is not the client's to pay) or came from the cache
 * @param costNanos what {@code charged} costs at the model's prices
 * @param run how the engine's call went (for a replay: served at once, by no deployment)
 * @param failure what the caller is thrown once every stage saw it (null unless failed or gone)
 */
public record Ended(
    Kind kind,
    Outcome outcome,
    Embedder.Embeddings embeddings,
    Generation.Usage charged,
    long costNanos,
    EngineRun run,
    RuntimeException failure) {

  public enum Kind {
    ANSWERED,
    REPLAYED,
    FAILED,
    CLIENT_GONE
  }

  /**
   * The engine's call: the deployment that answered ("" when none said, or from the cache) after
   * how many attempts (0 from the cache), when it was called and returned, and when the first
   * piece of the answer came (0: none).
   */
  public record EngineRun(
      String deployment, int attempts, long startedNanos, long endedNanos, long firstTokenNanos) {
    /** A run that ends now. */
    static EngineRun endingNow(
        String deployment, int attempts, long startedNanos, long firstTokenNanos) {
      return new EngineRun(deployment, attempts, startedNanos, System.nanoTime(), firstTokenNanos);
    }
  }

  /** The status the log gives a call whose client left (nginx's, as proxies log it). */
  static final int CLIENT_CLOSED = 499;

  private static final Generation.Usage NOTHING = new Generation.Usage(0, 0);

  /** An answer kept in the response cache, served at {@code servedNanos}: nothing charged. */
  static Ended replayed(Outcome outcome, long servedNanos) {
    return new Ended(
        Kind.REPLAYED,
        outcome,
        null,
        NOTHING,
        0,
        new EngineRun("", 0, servedNanos, servedNanos, 0),
        null);
  }

  /** A call that ended with {@code failure}, charged {@code used}. */
  static Ended failed(
      RuntimeException failure, Generation.Usage used, long costNanos, EngineRun run) {
    Kind kind = failure instanceof ClientGoneException ? Kind.CLIENT_GONE : Kind.FAILED;
    return new Ended(kind, null, null, used, costNanos, run, failure);
  }

  /** A call its engine answered, charged {@code charged} (a generation's or embeddings'). */
  static Ended answered(
      Outcome outcome,
      Embedder.Embeddings embeddings,
      Generation.Usage charged,
      long costNanos,
      EngineRun run) {
    return new Ended(Kind.ANSWERED, outcome, embeddings, charged, costNanos, run, null);
  }

  public boolean answered() {
    return kind == Kind.ANSWERED;
  }

  /** Whether the service failed the call (a client that left is not the service's failure). */
  public boolean failedByService() {
    return kind == Kind.FAILED;
  }

  /** The HTTP status the call ended with, as the request log keeps it. */
  public int status() {
    return switch (kind) {
      case ANSWERED, REPLAYED -> 200;
      case CLIENT_GONE -> CLIENT_CLOSED;
      case FAILED -> refusal().status();
    };
  }

  /** The outcome's code in metrics and logs: completed, the engine's failure, client_gone. */
  public String code() {
    return switch (kind) {
      case ANSWERED, REPLAYED -> "completed";
      case CLIENT_GONE -> "client_gone";
      case FAILED ->
        failure instanceof EngineException engine
            ? engine.failure().code()
            : refusal().code();
    };
  }

  /** The failure as the client is answered: an engine's in its HTTP terms, an error as a 500. */
  private ApiException refusal() {
    return switch (failure) {
      case EngineException engine -> engine.toApiException();
      case ApiException refused -> refused;
      default -> ApiException.internal();
    };
  }

  /** The answer's text, for the log and the trace (null when there is none). */
  public String answer() {
    return outcome == null ? null : outcome.generation().text();
  }
}
