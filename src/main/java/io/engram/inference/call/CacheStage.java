package io.engram.inference.call;

import io.engram.inference.engine.Generation;
import io.engram.inference.engine.TokenSink;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;

/**
 * The organization's response cache around its calls, where the organization turned it on
 * ({@code cache.enabled}) and the request did not turn it off: looked up while the call is
 * prepared (a refresh is a miss whose answer is kept), a hit answered from the cache instead of
 * the engine, and a whole text answer kept for {@code cache.ttl_seconds}.
 */
final class CacheStage implements Stage {
  private final ResponseCache cache;
  private final InferenceMetrics metrics;

  CacheStage(ResponseCache cache, InferenceMetrics metrics) {
    this.cache = cache;
    this.metrics = metrics;
  }

  /** After the memory stage: the key holds the injected memories' ids and versions. */
  @Override
  public void prepare(ModelCall call) {
    EffectiveConfig config = call.config();
    if (call.cacheMode() == CacheMode.OFF
        || config == null
        || !config.switchedOn(ConfigField.CACHE_ENABLED)) {
      return;
    }
    String key = ResponseCache.key(call.modelId(), call.request(), call.memory().versions());
    ResponseCache.Entry hit =
        call.cacheMode() == CacheMode.REFRESH ? null : cache.get(call.caller().orgId(), key);
    metrics.cache(hit == null ? "miss" : "hit");
    call.cache(
        new Caching(key, hit, config.seconds(ConfigField.CACHE_TTL_SECONDS).toSeconds()));
  }

  @Override
  public Ended intercept(Chain chain) {
    ResponseCache.Entry hit = chain.call().cache().hit();
    if (hit != null) {
      return replay(hit, chain.sink());
    }
    Ended ended = chain.proceed(chain.sink());
    if (ended.answered() && chain.call().cache().key() != null) {
      keep(chain.call(), ended.outcome());
    }
    return ended;
  }

  /** Serves a kept answer: the client gets its text (one piece, when it streams) and its usage. */
  private static Ended replay(ResponseCache.Entry hit, TokenSink sink) {
    GatewaySpans.response();
    sink.begin();
    if (!hit.text().isEmpty()) {
      sink.text(hit.text());
    }
    return Ended.replayed(
        new Outcome(new Generation(hit.text(), hit.finishReason(), hit.usage()), hit.usage()),
        System.nanoTime());
  }

  /** Keeps a whole text answer (no tool call, one choice, ended or cut by length) when asked. */
  private void keep(ModelCall call, Outcome outcome) {
    Generation generation = outcome.generation();
    if (generation.text() == null
        || generation.toolCalls() != null
        || generation.choices() != null
        || !(Generation.STOP.equals(generation.finishReason())
            || Generation.LENGTH.equals(generation.finishReason()))) {
      return;
    }
    boolean kept = cache.put(
        call.caller().orgId(),
        call.cache().key(),
        new Generation(
            generation.text(),
            generation.finishReason(),
            outcome.usage(),
            generation.toolCalls(),
            generation.choices()),
        call.cache().ttlSeconds());
    metrics.cache(kept ? "stored" : "too_large");
  }
}
