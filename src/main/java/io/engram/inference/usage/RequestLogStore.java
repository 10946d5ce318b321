package io.engram.inference.usage;

import com.fasterxml.jackson.core.type.TypeReference;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The request log's rows (V30__request_log.sql); contents sealed at rest. */
final class RequestLogStore {
  private static final TypeReference<List<RequestRecord.UsedMemory>> MEMORIES =
      new TypeReference<>() {};
  private static final TypeReference<List<RequestRecord.Guardrailed>> GUARDRAILS =
      new TypeReference<>() {};
  private static final TypeReference<List<String>> IDS = new TypeReference<>() {};

  /** What a listing may be narrowed to; null fields narrow nothing. */
  record Filter(
      String model,
      Integer status,
      String credentialId,
      String errorCode,
      String cache,
      Long since,
      Long until,
      String guardrailId) {}

  private final Database database;
  private final SecretBox secrets;

  RequestLogStore(Database database, SecretBox secrets) {
    this.database = database;
    this.secrets = secrets;
  }

  /** Memory ids per LIKE query over the records' memory lists. */
  private static final int IDS_PER_QUERY = 50;

  /** See {@link RequestLog#forget}. */
  long forget(String orgId, String endUser, java.util.Set<String> memoryIds) {
    String scrub = "UPDATE request_log SET messages_sealed = NULL, answer_sealed = NULL"
        + " WHERE org_id = :org AND (messages_sealed IS NOT NULL OR answer_sealed IS NOT NULL)";
    long count = 0;
    if (endUser != null) {
      count += database.write(h -> h.createUpdate(scrub + " AND end_user_id = :user")
          .bind("org", orgId)
          .bind("user", endUser)
          .execute());
    }
    List<String> ids = List.copyOf(memoryIds);
    for (int from = 0; from < ids.size(); from += IDS_PER_QUERY) {
      List<String> chunk = ids.subList(from, Math.min(ids.size(), from + IDS_PER_QUERY));
      StringBuilder any = new StringBuilder();
      for (int i = 0; i < chunk.size(); i++) {
        any.append(i == 0 ? "" : " OR ").append("memories LIKE :m").append(i);
      }
      count += database.write(h -> {
        var update = h.createUpdate(scrub + " AND (" + any + ")").bind("org", orgId);
        for (int i = 0; i < chunk.size(); i++) {
          // The memories column is JSON: each id appears quoted.
          update.bind("m" + i, "%\"" + chunk.get(i) + "\"%");
        }
        return update.execute();
      });
    }
    return count;
  }

  void insert(List<RequestRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    database.write(h -> {
      var batch = h.prepareBatch("""
          INSERT INTO request_log (id, org_id, at, route, credential_id, assistant_id, agent,
            end_user_id, model, deployment, attempts, status, error_code, queue_ms, first_token_ms, total_ms,
            prompt_tokens, completion_tokens, memory_tokens, cost_nanos, cache, memories,
            messages_sealed, answer_sealed, guardrails, memories_left_out)
          VALUES (:id, :org, :at, :route, :credential, :assistant, :agent, :endUser, :model,
            :deployment,
            :attempts, :status, :error, :queue, :first, :total, :prompt, :completion, :memory,
            :cost, :cache, :memories, :messages, :answer, :guardrails, :leftOut)
          ON CONFLICT (id) DO NOTHING""");
      for (RequestRecord r : records) {
        batch
            .bind("id", r.who().id())
            .bind("org", r.who().orgId())
            .bind("at", r.who().at())
            .bind("route", r.who().route())
            .bind("credential", r.who().credentialId())
            .bind("assistant", r.who().assistantId())
            .bind("agent", r.who().agent())
            .bind("endUser", r.who().endUser())
            .bind("model", r.who().model())
            .bind("deployment", r.deployment())
            .bind("attempts", r.attempts())
            .bind("status", r.status())
            .bind("error", r.errorCode())
            .bind("queue", r.queueMs())
            .bind("first", r.firstTokenMs())
            .bind("total", r.totalMs())
            .bind("prompt", r.promptTokens())
            .bind("completion", r.completionTokens())
            .bind("memory", r.memoryTokens())
            .bind("cost", r.costNanos())
            .bind("cache", r.cache())
            .bind("memories", Json.write(r.memories()))
            .bind("messages", r.messages() == null ? null : secrets.seal(r.messages()))
            .bind("answer", r.answer() == null ? null : secrets.seal(r.answer()))
            .bind("guardrails", Json.write(r.guardrails()))
            .bind("leftOut", Json.write(r.memoriesLeftOut()))
            .add();
      }
      batch.execute();
      return null;
    });
  }

  Optional<RequestRecord> find(String orgId, String id) {
    return database.read(
        h -> h.createQuery("SELECT * FROM request_log WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map((rs, ctx) -> record(rs, true))
            .findOne());
  }

  /**
   * The organization's requests, newest first, after the cursor (a request id of an earlier page:
   * the ones older than it), at most {@code limit}; contents left out.
   */
  List<RequestRecord> list(String orgId, Filter filter, String after, int limit) {
    Map<String, Object> bound = new LinkedHashMap<>();
    StringBuilder sql = new StringBuilder("SELECT * FROM request_log WHERE org_id = :org");
    narrow(sql, bound, "model = :model", "model", filter.model());
    narrow(sql, bound, "status = :status", "status", filter.status());
    narrow(sql, bound, "credential_id = :credential", "credential", filter.credentialId());
    narrow(sql, bound, "error_code = :error", "error", filter.errorCode());
    narrow(sql, bound, "cache = :cache", "cache", filter.cache());
    narrow(sql, bound, "at >= :since", "since", filter.since());
    narrow(sql, bound, "at < :until", "until", filter.until());
    // The guardrails column is JSON: a guardrail's id appears quoted.
    narrow(
        sql,
        bound,
        "guardrails LIKE :guardrail",
        "guardrail",
        filter.guardrailId() == null ? null : "%\"" + filter.guardrailId() + "\"%");
    narrow(
        sql,
        bound,
        "(at, id) < (SELECT at, id FROM request_log WHERE org_id = :org AND id = :after)",
        "after",
        after);
    sql.append(" ORDER BY at DESC, id DESC LIMIT :limit");
    return database.read(h -> {
      var query = h.createQuery(sql.toString()).bind("org", orgId).bind("limit", limit);
      bound.forEach(query::bind);
      return query.map((rs, ctx) -> record(rs, false)).list();
    });
  }

  /** Adds {@code condition} and its value when the value is set. */
  private static void narrow(
      StringBuilder sql, Map<String, Object> bound, String condition, String name, Object value) {
    if (value != null) {
      sql.append(" AND ").append(condition);
      bound.put(name, value);
    }
  }

  /** Deletes the organization's requests older than {@code before}; how many went. */
  int purge(String orgId, long before) {
    return database.write(
        h -> h.createUpdate("DELETE FROM request_log WHERE org_id = :org AND at < :before")
            .bind("org", orgId)
            .bind("before", before)
            .execute());
  }

  /** Every organization that has requests in the log. */
  List<String> organizations() {
    return database.read(h -> h.createQuery("SELECT DISTINCT org_id FROM request_log")
        .mapTo(String.class)
        .list());
  }

  private RequestRecord record(ResultSet rs, boolean contents) throws SQLException {
    long first = rs.getLong("first_token_ms");
    Long firstToken = rs.wasNull() ? null : first;
    String messages = contents ? rs.getString("messages_sealed") : null;
    String answer = contents ? rs.getString("answer_sealed") : null;
    return new RequestRecord(
        new RequestRecord.Who(
            rs.getString("id"),
            rs.getString("org_id"),
            rs.getLong("at"),
            rs.getString("route"),
            rs.getString("credential_id"),
            rs.getString("assistant_id"),
            rs.getString("agent"),
            rs.getString("end_user_id"),
            rs.getString("model")),
        rs.getString("deployment"),
        rs.getInt("attempts"),
        rs.getInt("status"),
        rs.getString("error_code"),
        rs.getLong("queue_ms"),
        firstToken,
        rs.getLong("total_ms"),
        rs.getLong("prompt_tokens"),
        rs.getLong("completion_tokens"),
        rs.getLong("memory_tokens"),
        rs.getLong("cost_nanos"),
        rs.getString("cache"),
        Json.read(rs.getString("memories"), MEMORIES),
        messages == null ? null : secrets.open(messages),
        answer == null ? null : secrets.open(answer),
        Json.read(rs.getString("guardrails"), GUARDRAILS),
        Json.read(rs.getString("memories_left_out"), IDS));
  }
}
