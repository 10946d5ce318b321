package io.engram.finetuning;

import io.engram.organizations.Organization;
import io.engram.organizations.Tier;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;

/**
 * The variables that govern an organization's fine-tuning, as in force for it (system, plan,
 * organization and instance layers): TRAINING_ENABLED, CHECKPOINT_INTERVAL,
 * GRADIENT_ACCUMULATION_STEPS, and BATCH_SIZE, the batch size of a job that leaves it auto
 * (by plan when unset: 1 below Seed, 2 from Seed, 4 from Scale, 8 on Dedicated).
 */
public record TrainingSettings(
    boolean enabled, int checkpointInterval, int accumulation, int batchSize) {

  public static TrainingSettings of(OrganizationConfigs configs, Organization org) {
    EffectiveConfig config = configs.effective(org);
    return new TrainingSettings(
        !config
            .variable("TRAINING_ENABLED")
            .map(String::strip)
            .orElse("true")
            .equalsIgnoreCase("false"),
        integer(config, "CHECKPOINT_INTERVAL", 1000),
        integer(config, "GRADIENT_ACCUMULATION_STEPS", 4),
        integer(config, "BATCH_SIZE", planBatch(org.plan().tier())));
  }

  private static int integer(EffectiveConfig config, String name, int fallback) {
    return config
        .variable(name)
        .filter(value -> value.strip().matches("\\d{1,9}"))
        .map(value -> Math.max(1, Integer.parseInt(value.strip())))
        .orElse(fallback);
  }

  static int planBatch(Tier tier) {
    if (tier.atLeast(Tier.DEDICATED)) {
      return 8;
    }
    if (tier.atLeast(Tier.SCALE)) {
      return 4;
    }
    return tier.atLeast(Tier.SEED) ? 2 : 1;
  }
}
