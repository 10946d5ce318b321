package io.engram.inference.usage;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a provider bills for embeddings against the gateway's own count of the same inputs, per
 * organization and model: what an embeddings request is admitted and reserved at. A chat's
 * reservation is an upper bound by construction (its prompt plus {@code max_tokens}); an
 * embeddings request has only its inputs, and a provider whose tokenizer is not the gateway's
 * (or that adds tokens of its own an input) bills more than the gateway counted, so concurrent
 * requests reserved at the gateway's count could pass a budget together. Each answer teaches the
 * ratio: the largest seen, decaying by {@link #DECAY} an answer towards what answers show, so one
 * unusual input does not raise reservations for good. Kept per node (each node learns from its
 * first answer); the first request of a model on a node is reserved at the gateway's own count.
 */
public final class BilledTokens {
  static final double DECAY = 0.95;
  /** Organizations times their embedding models: entries are a few dozen bytes. */
  private final Map<String, Double> ratios = new ConcurrentHashMap<>();

  /** The tokens to admit and reserve for inputs the gateway counts {@code counted}. */
  public long expected(String orgId, String model, long counted) {
    double ratio = ratios.getOrDefault(key(orgId, model), 1.0);
    return Math.max(1, (long) Math.ceil(counted * ratio));
  }

  /** An answer: the provider billed {@code billed} tokens for inputs the gateway counted. */
  public void billed(String orgId, String model, long counted, long billed) {
    if (counted <= 0 || billed < 0) {
      return;
    }
    double ratio = billed / (double) counted;
    ratios.merge(key(orgId, model), ratio, (kept, now) -> Math.max(now, kept * DECAY));
  }

  private static String key(String orgId, String model) {
    return orgId + '\u0000' + model;
  }
}
