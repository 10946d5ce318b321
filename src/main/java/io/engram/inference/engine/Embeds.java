package io.engram.inference.engine;

import java.time.Duration;
import java.util.List;

/**
 * An engine that turns texts into vectors (a provider's embeddings API, or a routed embedding
 * model over such providers).
 */
public interface Embeds {

  /**
   * The texts' vectors, in order, and the tokens the provider counted (-1: it did not say).
   *
   * @param dimensions the vectors' length asked (null: the model's own)
   * @param orgId the organization it runs for, whose outbound firewall each call passes
   * @throws EngineException as a generation fails on the same answers
   */
  Vectors embed(
      List<String> texts, Integer dimensions, String user, Duration timeout, String orgId);

  /** Vectors, the tokens counted for them, and the deployment that answered (null: not routed). */
  record Vectors(List<float[]> vectors, int tokens, String deployment) {
    public Vectors(List<float[]> vectors, int tokens) {
      this(vectors, tokens, null);
    }

    public Vectors answeredBy(String answering) {
      return new Vectors(vectors, tokens, answering);
    }
  }
}
