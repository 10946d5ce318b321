package io.engram.inference.usage;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What a model's answers charge for inputs (a chat's prompt with its memory block, a completion's
 * prompt, embeddings' inputs) against the gateway's own count of the same inputs, per organization
 * and model: the ratio a request's inputs are admitted and reserved at. A reply is bounded by
 * {@code max_tokens} in the provider's own tokens; the inputs are not, and a provider whose
 * tokenizer is not the gateway's cl100k_base (Anthropic's, Gemini's, a local model's), or that
 * adds tokens of its own (tool definitions, a framing per input), charges more than the gateway
 * counted, so concurrent requests reserved at the gateway's count could pass a budget together
 * before they settle.
 *
 * <p>Each answer teaches the ratio: the largest seen, decaying by {@link #DECAY} an answer towards
 * what answers show, so one unusual request does not raise reservations for good. Before a node
 * has an answer it reserves at {@link #UNLEARNED}, and what it learned drifts back there, halving
 * the distance every {@link #HALF_LIFE_NANOS} without answers: an outlier that makes a small
 * budget refuse every request (so no answer comes to bring it down) fades, and a quiet hour leaves
 * the reservation where a node knowing nothing would put it, not below what the provider charges.
 * Kept per node: each node learns from its own answers.
 */
public final class BilledTokens {
  /**
   * The ratio before any answer: twice the gateway's count. Tokenizers of today's chat models
   * count English text within about a third of cl100k_base; twice covers them, and a first
   * request that cannot fit a budget at twice its prompt fits it at its learned ratio moments
   * later. A provider charging more than twice (a few words with tool definitions) can pass a
   * budget by the difference with the requests a node sends before its first answer.
   */
  public static final double UNLEARNED = 2.0;

  static final double DECAY = 0.95;
  static final long HALF_LIFE_NANOS = TimeUnit.MINUTES.toNanos(10);

  /** Time moves a learned ratio in whole minutes: between answers moments apart, it holds. */
  private static final long STEP_NANOS = TimeUnit.MINUTES.toNanos(1);

  /** A ratio learned and when its last answer came. */
  private record Learned(double ratio, long atNanos) {
    double at(long nowNanos) {
      long steps = Math.max(0, nowNanos - atNanos) / STEP_NANOS;
      double halves = steps * STEP_NANOS / (double) HALF_LIFE_NANOS;
      return UNLEARNED + (ratio - UNLEARNED) * Math.pow(0.5, halves);
    }
  }

  /** Organizations times their models: entries are a few dozen bytes. */
  private final Map<String, Learned> ratios = new ConcurrentHashMap<>();

  private final LongSupplier nanos;

  public BilledTokens() {
    this(System::nanoTime);
  }

  BilledTokens(LongSupplier nanos) {
    this.nanos = nanos;
  }

  /**
   * What the model's inputs are charged per token the gateway counts, as far as this node knows,
   * and never less than one: a model that charged less for short inputs (where the gateway counts
   * its framing and the model did not) may not for long ones, and an input reserved below the
   * gateway's own count could pass the budget it was admitted to.
   */
  public double ratio(String orgId, String model) {
    Learned learned = ratios.get(key(orgId, model));
    return learned == null ? UNLEARNED : Math.max(1.0, learned.at(nanos.getAsLong()));
  }

  /** The tokens to admit and reserve for inputs the gateway counts {@code counted}. */
  long expected(String orgId, String model, long counted) {
    return Math.max(1, atRatio(counted, ratio(orgId, model)));
  }

  /**
   * {@code counted} tokens at {@code ratio}, rounded up (a reservation never falls short by one),
   * less a rounding error's worth: 11 tokens for 7 counted are 11 again at the ratio they taught.
   */
  public static long atRatio(long counted, double ratio) {
    return (long) Math.ceil(counted * ratio - 1e-9);
  }

  /**
   * An answer: the model's inputs were charged {@code charged} tokens where the gateway counted
   * {@code counted}. Nothing is learned from an input the gateway counted empty, nor from a count
   * a provider did not give (negative).
   */
  public void charged(String orgId, String model, long counted, long charged) {
    if (counted <= 0 || charged < 0) {
      return;
    }
    long now = nanos.getAsLong();
    Learned answer = new Learned(charged / (double) counted, now);
    ratios.merge(
        key(orgId, model),
        answer,
        (kept, fresh) -> new Learned(Math.max(fresh.ratio(), kept.at(now) * DECAY), now));
  }

  private static String key(String orgId, String model) {
    return orgId + '\u0000' + model;
  }
}
