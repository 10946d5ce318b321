package io.engram.alerts;

import io.engram.platform.Ids;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * Alerts in the database. At most one alert of a kind fires per organization (a unique index on
 * the firing ones), so two evaluations, or two nodes, cannot open the same alert twice.
 */
public final class AlertStore {
  private static final RowMapper<Alert> MAPPER = (rs, ctx) -> new Alert(
      rs.getString("id"),
      rs.getString("org_id"),
      AlertKind.fromId(rs.getString("kind")).orElseThrow(),
      Alert.State.valueOf(rs.getString("state").toUpperCase(java.util.Locale.ROOT)),
      Rows.instant(rs, "started_at"),
      rs.getObject("ended_at") == null ? null : Rows.instant(rs, "ended_at"),
      rs.getDouble("value"),
      rs.getDouble("threshold"),
      rs.getString("message"));

  private final Database db;

  public AlertStore(Database db) {
    this.db = db;
  }

  /**
   * The condition holds: opens a firing alert and returns it, or, when one is already firing,
   * updates its measurement and returns empty (nothing new to tell anyone).
   */
  public Optional<Alert> fire(
      String orgId, AlertKind kind, double value, double threshold, String message, Instant at) {
    return db.write(h -> {
      int updated = h.createUpdate("""
              UPDATE alerts SET value = :value, threshold = :threshold, message = :message,
                updated_at = :at
              WHERE org_id = :org AND kind = :kind AND state = 'firing'""")
          .bind("value", value)
          .bind("threshold", threshold)
          .bind("message", message)
          .bind("at", at.toEpochMilli())
          .bind("org", orgId)
          .bind("kind", kind.id())
          .execute();
      if (updated > 0) {
        return Optional.<Alert>empty();
      }
      String id = Ids.newId("alert", at.toEpochMilli());
      int inserted = h.createUpdate("""
              INSERT INTO alerts (id, org_id, kind, state, started_at, value, threshold, message,
                updated_at)
              VALUES (:id, :org, :kind, 'firing', :at, :value, :threshold, :message, :at)
              ON CONFLICT DO NOTHING""")
          .bind("id", id)
          .bind("org", orgId)
          .bind("kind", kind.id())
          .bind("at", at.toEpochMilli())
          .bind("value", value)
          .bind("threshold", threshold)
          .bind("message", message)
          .execute();
      return inserted == 0 ? Optional.<Alert>empty() : find(h, id);
    });
  }

  /**
   * The condition cleared: resolves the firing alert of that kind, if any, and returns it. Its
   * value stays the one its message names (the last measurement while it fired): the measurement
   * at clearing can read oddly (a window with two requests, one failed, "reads" 50 %).
   */
  public Optional<Alert> resolve(String orgId, AlertKind kind, Instant at) {
    return db.write(h -> {
      Optional<Alert> firing = h.createQuery(
              "SELECT * FROM alerts WHERE org_id = :org AND kind = :kind AND state = 'firing'")
          .bind("org", orgId)
          .bind("kind", kind.id())
          .map(MAPPER)
          .findOne();
      if (firing.isEmpty()) {
        return firing;
      }
      h.createUpdate("""
              UPDATE alerts SET state = 'resolved', ended_at = :at, updated_at = :at
              WHERE id = :id AND state = 'firing'""")
          .bind("at", at.toEpochMilli())
          .bind("id", firing.get().id())
          .execute();
      return find(h, firing.get().id());
    });
  }

  /** The organization's alerts, newest first, filtered by state and kind when given. */
  public List<Alert> list(
      String orgId, Alert.State state, AlertKind kind, String beforeId, int limit) {
    String sql = "SELECT * FROM alerts WHERE org_id = :org AND id < :before"
        + (state == null ? "" : " AND state = :state")
        + (kind == null ? "" : " AND kind = :kind")
        + " ORDER BY id DESC LIMIT :limit";
    return db.read(h -> {
      var query = h.createQuery(sql)
          .bind("org", orgId)
          .bind("before", beforeId == null ? "~" : beforeId)
          .bind("limit", limit);
      if (state != null) {
        query.bind("state", state.id());
      }
      if (kind != null) {
        query.bind("kind", kind.id());
      }
      return query.map(MAPPER).list();
    });
  }

  /** Every firing alert (the evaluator re-checks their organizations even when they are quiet). */
  public List<Alert> firing() {
    return db.read(h ->
        h.createQuery("SELECT * FROM alerts WHERE state = 'firing'").map(MAPPER).list());
  }

  private static Optional<Alert> find(Handle h, String id) {
    return h.createQuery("SELECT * FROM alerts WHERE id = :id")
        .bind("id", id)
        .map(MAPPER)
        .findOne();
  }
}
