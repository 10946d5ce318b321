package io.engram.inference.usage;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An organization's usage rows over a span of whole hours, their totals, and the latency of its
 * requests: over the span, per model and per UTC day.
 */
record UsageReport(
    List<UsageStore.Row> rows,
    Totals totals,
    Latency overall,
    Map<String, Latency> byModel,
    Map<Long, Latency> byDay) {
  static final long DAY_MILLIS = 86_400_000L;

  /** The sums over every row; total tokens are prompt plus completion, as in each row. */
  record Totals(
      long requests,
      long promptTokens,
      long completionTokens,
      long memoryTokens,
      long errors,
      long costNanos,
      long cacheHits) {
    long totalTokens() {
      return promptTokens + completionTokens;
    }
  }

  /** Percentiles of the requests' durations, in ms (null when there were none). */
  record Latency(long requests, Long p50, Long p90, Long p99) {
    static Latency of(long[] counts) {
      long requests = 0;
      for (long c : counts) {
        requests += c;
      }
      return new Latency(
          requests,
          LatencyBuckets.percentile(counts, 50),
          LatencyBuckets.percentile(counts, 90),
          LatencyBuckets.percentile(counts, 99));
    }
  }

  static UsageReport of(List<UsageStore.Row> rows, List<UsageStore.LatencyRow> latency) {
    long requests = 0;
    long prompt = 0;
    long completion = 0;
    long memory = 0;
    long errors = 0;
    long cost = 0;
    long hits = 0;
    for (UsageStore.Row row : rows) {
      cost += row.costNanos();
      hits += row.cacheHits();
      requests += row.requests();
      prompt += row.promptTokens();
      completion += row.completionTokens();
      memory += row.memoryTokens();
      errors += row.errors();
    }
    long[] all = new long[LatencyBuckets.COUNT];
    Map<String, long[]> models = new TreeMap<>();
    Map<Long, long[]> days = new TreeMap<>();
    for (UsageStore.LatencyRow row : latency) {
      all[row.bucket()] += row.requests();
      models.computeIfAbsent(row.model(), m -> new long[LatencyBuckets.COUNT])[row.bucket()] +=
          row.requests();
      long day = row.hourStart() - Math.floorMod(row.hourStart(), DAY_MILLIS);
      days.computeIfAbsent(day, d -> new long[LatencyBuckets.COUNT])[row.bucket()] +=
          row.requests();
    }
    Map<String, Latency> byModel = new TreeMap<>();
    models.forEach((model, counts) -> byModel.put(model, Latency.of(counts)));
    Map<Long, Latency> byDay = new TreeMap<>();
    days.forEach((day, counts) -> byDay.put(day, Latency.of(counts)));
    return new UsageReport(
        List.copyOf(rows),
        new Totals(requests, prompt, completion, memory, errors, cost, hits),
        Latency.of(all),
        byModel,
        byDay);
  }
}
