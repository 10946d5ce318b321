package io.engram.inference;

import io.engram.inference.engine.GenerationRequest;
import io.engram.organizations.Organization;
import io.engram.organizations.Tier;
import io.engram.settings.EffectiveConfig;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * What an organization's variables ask of its model calls, read from its settings in force
 * (looked up once a call): how long to wait for an answer, how much of an in-process model its
 * generations may hold, and whether parameters a provider cannot carry are dropped.
 */
final class EngineVariables {
  /** WORKER_PROCESSES as a number of workers (compiled once: it is read on every generation). */
  private static final Pattern WORKERS = Pattern.compile("\\d{1,3}");

  private EngineVariables() {}

  /** REQUEST_TIMEOUT as in force for the organization: the longest wait for its model's answer. */
  static Duration requestTimeout(EffectiveConfig config) {
    return config == null
        ? null
        : config
            .variable("REQUEST_TIMEOUT")
            .map(seconds -> Duration.ofSeconds(Long.parseLong(seconds)))
            .orElse(null);
  }

  /**
   * How many of an in-process model's workers the organization's generations may hold at once:
   * WORKER_PROCESSES as in force for it, else by plan (1 on Spark and below, 2 from Seed, 4 from
   * Scale, every worker on Dedicated), so one organization cannot take a shared model whole.
   */
  static GenerationRequest.Share engineShare(EffectiveConfig config, Organization org) {
    return new GenerationRequest.Share(config
        .variable("WORKER_PROCESSES")
        .filter(value -> WORKERS.matcher(value.strip()).matches())
        .map(value -> Integer.parseInt(value.strip()))
        .orElseGet(() -> planWorkers(org.plan().tier())));
  }

  static int planWorkers(Tier tier) {
    if (tier.atLeast(Tier.DEDICATED)) {
      return Integer.MAX_VALUE;
    }
    if (tier.atLeast(Tier.SCALE)) {
      return 4;
    }
    return tier.atLeast(Tier.SEED) ? 2 : 1;
  }

  /**
   * The organization's DROP_PARAMS: parameters a provider's API cannot carry are left out rather
   * than refused (as LiteLLM's drop_params); the in-process engine refuses them whatever it says.
   */
  static boolean dropsParameters(EffectiveConfig config) {
    return config != null && Boolean.parseBoolean(config.variable("DROP_PARAMS").orElse("false"));
  }
}
