package io.engram.inference.usage;

import java.util.List;

/** An organization's usage rows over a span of whole hours, and their totals. */
record UsageReport(List<UsageStore.Row> rows, Totals totals) {

  /** The sums over every row; total tokens are prompt plus completion, as in each row. */
  record Totals(long requests, long promptTokens, long completionTokens, long memoryTokens) {
    long totalTokens() {
      return promptTokens + completionTokens;
    }
  }

  static UsageReport of(List<UsageStore.Row> rows) {
    long requests = 0;
    long prompt = 0;
    long completion = 0;
    long memory = 0;
    for (UsageStore.Row row : rows) {
      requests += row.requests();
      prompt += row.promptTokens();
      completion += row.completionTokens();
      memory += row.memoryTokens();
    }
    return new UsageReport(List.copyOf(rows), new Totals(requests, prompt, completion, memory));
  }
}
