package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;

/**
 * The handler of {@code access_org_analytics}: the organization's own usage figures, computed from
 * Engram's data, limited to the metrics its config allows ({@code allowedMetrics}) and to the
 * look-back window it sets ({@code dataRetention}, days) for metrics over time.
 */
public final class OrganizationAnalytics implements CapabilityHandler {
  public static final String ID = "access_org_analytics";
  private static final String METRICS_FIELD = "allowedMetrics";
  /** The metrics {@link #metric} computes; the registry's allowedMetrics may offer only these. */
  private static final Set<String> METRICS = Set.of(
      "assistants",
      "assistants_by_type",
      "capability_adoption",
      "capability_changes",
      "members",
      "members_by_role",
      "api_keys");

  private final Database db;

  public OrganizationAnalytics(Database db) {
    this.db = db;
  }

  @Override
  public String capabilityId() {
    return ID;
  }

  @Override
  public void checkEntry(Capability entry) {
    ConfigSchemaField field = entry.config().get(METRICS_FIELD);
    if (field == null || field.allowed() == null || !METRICS.containsAll(field.allowed())) {
      throw new IllegalStateException(
          METRICS_FIELD + " must list its values (enum), all among " + METRICS);
    }
  }

  @Override
  public JsonNode execute(Invocation invocation) {
    List<String> allowed = strings(invocation.config().get(METRICS_FIELD));
    List<String> requested = requestedMetrics(invocation.arguments(), allowed);
    Instant from = invocation
        .at()
        .minus(Duration.ofDays(invocation.config().get("dataRetention").asLong()));
    ObjectNode metrics = Json.MAPPER.createObjectNode();
    db.read(h -> {
      for (String metric : requested) {
        metrics.set(
            metric,
            Json.MAPPER.valueToTree(metric(h, metric, invocation.orgId(), from, invocation.at())));
      }
      return null;
    });
    ObjectNode result = Json.MAPPER.createObjectNode();
    result
        .putObject("window")
        .put("from", from.toString())
        .put("to", invocation.at().toString());
    result.set("metrics", metrics);
    return result;
  }

  /** The metrics asked for ({@code arguments.metrics}), all allowed ones when none are named. */
  private static List<String> requestedMetrics(JsonNode arguments, List<String> allowed) {
    JsonNode named = arguments == null ? null : arguments.get("metrics");
    if (named == null || named.isNull()) {
      return allowed;
    }
    if (!named.isArray() || named.isEmpty()) {
      throw ApiException.badRequest(
          "arguments.metrics",
          "'arguments.metrics' must be a non-empty array of metric " + "names");
    }
    if (!named.valueStream().allMatch(JsonNode::isTextual)) {
      throw ApiException.badRequest(
          "arguments.metrics", "'arguments.metrics' must contain metric names (strings)");
    }
    List<String> requested = strings(named);
    for (String metric : requested) {
      if (!allowed.contains(metric)) {
        throw ApiException.forbidden(
            "metric_not_allowed",
            "Metric '" + metric + "' is not in this assistant's " + "allowedMetrics: "
                + String.join(", ", allowed));
      }
    }
    return requested;
  }

  private static Object metric(Handle h, String metric, String orgId, Instant from, Instant now) {
    return switch (metric) {
      case "assistants" ->
        count(
            h, "SELECT COUNT(*) FROM assistants WHERE org_id = :org AND deleted_at IS NULL", orgId);
      case "assistants_by_type" ->
        grouped(
            h,
            "SELECT type AS k, COUNT(*) AS n FROM assistants "
                + "WHERE org_id = :org AND deleted_at IS NULL GROUP BY type",
            orgId);
      case "capability_adoption" -> adoption(h, orgId);
      case "capability_changes" ->
        h.createQuery("""
              SELECT COUNT(*) FROM assistant_capability_versions v JOIN assistants a ON a.id = v.assistant_id
              WHERE a.org_id = :org AND v.version > 1 AND v.changed_at >= :from""")
            .bind("org", orgId)
            .bind("from", from.toEpochMilli())
            .mapTo(Long.class)
            .one();
      case "members" -> count(h, "SELECT COUNT(*) FROM users WHERE org_id = :org", orgId);
      case "members_by_role" ->
        grouped(
            h,
            "SELECT role AS k, COUNT(*) AS n FROM users WHERE org_id = :org " + "GROUP BY role",
            orgId);
      case "api_keys" ->
        h.createQuery("""
              SELECT COUNT(*) FROM credentials WHERE org_id = :org AND kind = 'api_key' AND revoked_at IS NULL
                AND (expires_at IS NULL OR expires_at > :now)""")
            .bind("org", orgId)
            .bind("now", now.toEpochMilli())
            .mapTo(Long.class)
            .one();
      default ->
        throw new IllegalStateException(
            "checkEntry admits only computed metrics, not '" + metric + "'");
    };
  }

  private static long count(Handle h, String sql, String orgId) {
    return h.createQuery(sql).bind("org", orgId).mapTo(Long.class).one();
  }

  private static Map<String, Long> grouped(Handle h, String sql, String orgId) {
    Map<String, Long> counts = new LinkedHashMap<>();
    h.createQuery(sql + " ORDER BY k")
        .bind("org", orgId)
        .map((rs, ctx) -> counts.put(rs.getString("k"), rs.getLong("n")))
        .list();
    return counts;
  }

  /** How many of the organization's assistants have each capability enabled. */
  private static Map<String, Long> adoption(Handle h, String orgId) {
    Map<String, Long> counts = new TreeMap<>();
    h.createQuery("SELECT capabilities FROM assistants WHERE org_id = :org AND deleted_at IS NULL")
        .bind("org", orgId)
        .mapTo(String.class)
        .forEach(text -> List.of(Json.read(text, String[].class))
            .forEach(id -> counts.merge(id, 1L, Long::sum)));
    return counts;
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(item -> values.add(item.asText()));
    return values;
  }
}
