package io.engram.inference.usage;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a provider bills for embeddings against the gateway's own count of the same inputs, per
 * organization and model: what an embeddings request is admitted and reserved at. A chat's
 * reservation is an upper bound by construction (its prompt plus {@code max_tokens}); an
 * embeddings request has only its inputs, and a provider whose tokenizer is not the gateway's
 * (or that adds tokens of its own an input) bills more than the gateway counted, so concurrent
 * requests reserved at the gateway's count could pass a budget together. Each answer teaches the
 * ratio: the largest seen, decaying by {@link #DECAY} an answer towards what answers show, so one
 * unusual input does not raise reservations for good. What it stands above 1 also halves every
 * {@link #HALF_LIFE_NANOS} without answers: a key whose budget is below the reservation one
 * outlier taught gets no answers to bring it down, and without time it would stay refused until
 * the node restarts. Kept per node (each node learns from its first answer); the first request of
 * a model on a node, and the first after a quiet hour, is reserved at about the gateway's count.
 */
public final class BilledTokens {
  static final double DECAY = 0.95;
  static final long HALF_LIFE_NANOS = TimeUnit.MINUTES.toNanos(10);

  /** A ratio learned and when its last answer came. */
  private record Learned(double ratio, long atNanos) {
    double at(long nowNanos) {
      double halves = Math.max(0, nowNanos - atNanos) / (double) HALF_LIFE_NANOS;
      return 1 + (ratio - 1) * Math.pow(0.5, halves);
    }
  }

  /** Organizations times their embedding models: entries are a few dozen bytes. */
  private final Map<String, Learned> ratios = new ConcurrentHashMap<>();

  private final LongSupplier nanos;

  public BilledTokens() {
    this(System::nanoTime);
  }

  BilledTokens(LongSupplier nanos) {
    this.nanos = nanos;
  }

  /** The tokens to admit and reserve for inputs the gateway counts {@code counted}. */
  public long expected(String orgId, String model, long counted) {
    Learned learned = ratios.get(key(orgId, model));
    double ratio = learned == null ? 1.0 : learned.at(nanos.getAsLong());
    return Math.max(1, (long) Math.ceil(counted * ratio));
  }

  /** An answer: the provider billed {@code billed} tokens for inputs the gateway counted. */
  public void billed(String orgId, String model, long counted, long billed) {
    if (counted <= 0 || billed < 0) {
      return;
    }
    long now = nanos.getAsLong();
    Learned answer = new Learned(billed / (double) counted, now);
    ratios.merge(
        key(orgId, model),
        answer,
        (kept, fresh) -> new Learned(Math.max(fresh.ratio(), kept.at(now) * DECAY), now));
  }

  private static String key(String orgId, String model) {
    return orgId + '\u0000' + model;
  }
}
