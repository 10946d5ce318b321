package io.engram.instances.storage;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/** The spec's storage usage object: GB as decimal numbers, adapters counted, and the limits. */
public final class StorageViews {
  private StorageViews() {}

  public static Map<String, Object> usage(StorageUsage.Usage usage, StorageUsage.Limits limits) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "storage.usage");
    view.put("training_data_gb", gb(usage.of(DataClass.TRAINING_DATA)));
    view.put("embeddings_gb", gb(usage.embeddings()));
    view.put("conversation_history_gb", gb(usage.of(DataClass.CONVERSATION_HISTORY)));
    view.put("lora_adapters_count", usage.adapters());
    view.put("results_gb", gb(usage.of(DataClass.RESULTS)));
    view.put("data_gb", gb(usage.of(DataClass.DATA)));
    view.put("lora_adapters_gb", gb(usage.of(DataClass.LORA_ADAPTERS)));
    view.put("total_bytes", usage.total());
    Map<String, Object> limit = new LinkedHashMap<>();
    // The plan's storage is one pool for every class; what was bought adds to it (docs/storage.md).
    limit.put("training_data_gb", plus(limits.planBytes(), limits.purchased().trainingDataGb()));
    limit.put(
        "lora_adapters_count",
        limits.adapters().isPresent() ? limits.adapters().getAsLong() : null);
    limit.put("embeddings_gb", plus(limits.planBytes(), limits.purchased().embeddingsGb()));
    limit.put("total_gb", gbLimit(limits.bytes()));
    Map<String, Object> bought = new LinkedHashMap<>();
    bought.put("training_data_gb", plain(limits.purchased().trainingDataGb()));
    bought.put("embeddings_gb", plain(limits.purchased().embeddingsGb()));
    limit.put("purchased", bought);
    view.put("limits", limit);
    return view;
  }

  /** Bytes as GB with nine decimals: a byte is never rounded away. */
  static BigDecimal gb(long bytes) {
    return plain(BigDecimal.valueOf(bytes)
        .divide(BigDecimal.valueOf(StorageUsage.GB), 9, RoundingMode.UNNECESSARY));
  }

  /** Without trailing zeros, and never in exponent form (10, not 1E+1). */
  static BigDecimal plain(BigDecimal value) {
    BigDecimal stripped = value.stripTrailingZeros();
    return stripped.scale() < 0 ? stripped.setScale(0) : stripped;
  }

  /** The plan's part of a limit plus what was bought of it, in GB; null when unlimited. */
  private static BigDecimal plus(OptionalLong planBytes, BigDecimal boughtGb) {
    return planBytes.isPresent() ? plain(gb(planBytes.getAsLong()).add(boughtGb)) : null;
  }

  private static BigDecimal gbLimit(OptionalLong bytes) {
    return bytes.isPresent() ? gb(bytes.getAsLong()) : null;
  }
}
