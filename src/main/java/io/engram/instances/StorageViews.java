package io.engram.instances;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/** The spec's storage usage object: GB as decimal numbers, adapters counted, and the limits. */
final class StorageViews {
  private StorageViews() {}

  static Map<String, Object> usage(StorageUsage.Usage usage, StorageUsage.Limits limits) {
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
    // The plan's allowance is one pool: every class counts against it (docs/storage.md).
    limit.put("training_data_gb", gbLimit(limits.bytes()));
    limit.put(
        "lora_adapters_count",
        limits.adapters().isPresent() ? limits.adapters().getAsLong() : null);
    limit.put("embeddings_gb", gbLimit(limits.bytes()));
    limit.put("total_gb", gbLimit(limits.bytes()));
    view.put("limits", limit);
    return view;
  }

  /** Bytes as GB with nine decimals: a byte is never rounded away. */
  static BigDecimal gb(long bytes) {
    return BigDecimal.valueOf(bytes)
        .divide(BigDecimal.valueOf(StorageUsage.GB), 9, RoundingMode.UNNECESSARY)
        .stripTrailingZeros()
        .max(BigDecimal.ZERO)
        .setScale(Math.max(0, BigDecimal.valueOf(bytes, 9).stripTrailingZeros().scale()));
  }

  private static BigDecimal gbLimit(OptionalLong bytes) {
    return bytes.isPresent() ? gb(bytes.getAsLong()) : null;
  }
}
