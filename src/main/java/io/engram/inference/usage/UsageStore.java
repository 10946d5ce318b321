package io.engram.inference.usage;

import io.engram.store.Database;
import java.util.List;

/** Hourly inference usage rows (see V6__inference_usage.sql). */
final class UsageStore {

  /**
   * One organization's usage by one credential of one model (and the deployment that answered,
   * '' when not routed) in one hour, with its cost in billionths of a US dollar.
   */
  record Row(
      String orgId,
      String credentialId,
      String model,
      String deployment,
      long hourStart,
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

  /** How many requests of one model in one hour took a duration within one latency bucket. */
  record LatencyRow(String orgId, String model, long hourStart, int bucket, long requests) {}

  private final Database database;

  UsageStore(Database database) {
    this.database = database;
  }

  /** Adds the rows' counts to what is stored, creating rows as needed, in one transaction. */
  void add(List<Row> rows) {
    if (rows.isEmpty()) {
      return;
    }
    database.write(handle -> {
      var batch = handle.prepareBatch("""
          INSERT INTO inference_usage (org_id, credential_id, model, deployment, hour_start, requests,
                                       prompt_tokens, completion_tokens, memory_tokens, errors,
                                       cost_nanos, cache_hits)
          VALUES (:org, :credential, :model, :deployment, :hour, :requests, :prompt, :completion,
                  :memory, :errors, :cost, :hits)
          ON CONFLICT (org_id, hour_start, credential_id, model, deployment) DO UPDATE SET
            requests = inference_usage.requests + excluded.requests,
            cost_nanos = inference_usage.cost_nanos + excluded.cost_nanos,
            cache_hits = inference_usage.cache_hits + excluded.cache_hits,
            errors = inference_usage.errors + excluded.errors,
            prompt_tokens = inference_usage.prompt_tokens + excluded.prompt_tokens,
            completion_tokens = inference_usage.completion_tokens + excluded.completion_tokens,
            memory_tokens = inference_usage.memory_tokens + excluded.memory_tokens""");
      for (Row row : rows) {
        batch
            .bind("org", row.orgId())
            .bind("credential", row.credentialId())
            .bind("model", row.model())
            .bind("deployment", row.deployment())
            .bind("cost", row.costNanos())
            .bind("hour", row.hourStart())
            .bind("requests", row.requests())
            .bind("prompt", row.promptTokens())
            .bind("completion", row.completionTokens())
            .bind("memory", row.memoryTokens())
            .bind("errors", row.errors())
            .bind("hits", row.cacheHits())
            .add();
      }
      batch.execute();
      return null;
    });
  }

  /** Adds latency counts to what is stored, in one transaction. */
  void addLatency(List<LatencyRow> rows) {
    if (rows.isEmpty()) {
      return;
    }
    database.write(handle -> {
      var batch = handle.prepareBatch("""
          INSERT INTO inference_latency (org_id, model, hour_start, bucket, requests)
          VALUES (:org, :model, :hour, :bucket, :requests)
          ON CONFLICT (org_id, hour_start, model, bucket) DO UPDATE SET
            requests = inference_latency.requests + excluded.requests""");
      for (LatencyRow row : rows) {
        batch
            .bind("org", row.orgId())
            .bind("model", row.model())
            .bind("hour", row.hourStart())
            .bind("bucket", row.bucket())
            .bind("requests", row.requests())
            .add();
      }
      batch.execute();
      return null;
    });
  }

  /** The organization's latency counts with {@code from <= hour_start < to}. */
  List<LatencyRow> latency(String orgId, long from, long to) {
    return database.read(handle -> handle
        .createQuery("""
            SELECT org_id, model, hour_start, bucket, requests FROM inference_latency
            WHERE org_id = :org AND hour_start >= :from AND hour_start < :to""")
        .bind("org", orgId)
        .bind("from", from)
        .bind("to", to)
        .map((rs, ctx) -> new LatencyRow(
            rs.getString("org_id"),
            rs.getString("model"),
            rs.getLong("hour_start"),
            rs.getInt("bucket"),
            rs.getLong("requests")))
        .list());
  }

  /** Tokens (prompt + completion) the organization used in the hour starting at {@code hourStart}. */
  long tokensInHour(String orgId, long hourStart) {
    return database.read(handle -> handle
        .createQuery("""
            SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM inference_usage
            WHERE org_id = :org AND hour_start = :hour""")
        .bind("org", orgId)
        .bind("hour", hourStart)
        .mapTo(Long.class)
        .one());
  }

  /** The organization's rows with {@code from <= hour_start < to}, oldest first. */
  List<Row> rows(String orgId, long from, long to) {
    return database.read(handle -> handle
        .createQuery("""
            SELECT org_id, credential_id, model, deployment, hour_start, requests, prompt_tokens,
                   completion_tokens, memory_tokens, errors, cost_nanos, cache_hits
            FROM inference_usage WHERE org_id = :org AND hour_start >= :from AND hour_start < :to
            ORDER BY hour_start, credential_id, model, deployment""")
        .bind("org", orgId)
        .bind("from", from)
        .bind("to", to)
        .map((rs, ctx) -> new Row(
            rs.getString("org_id"),
            rs.getString("credential_id"),
            rs.getString("model"),
            rs.getString("deployment"),
            rs.getLong("hour_start"),
            rs.getLong("requests"),
            rs.getLong("prompt_tokens"),
            rs.getLong("completion_tokens"),
            rs.getLong("memory_tokens"),
            rs.getLong("errors"),
            rs.getLong("cost_nanos"),
            rs.getLong("cache_hits")))
        .list());
  }
}
