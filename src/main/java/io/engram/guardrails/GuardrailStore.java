package io.engram.guardrails;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;

/** The guardrails table: one row a guardrail, its spec as written. */
final class GuardrailStore {
  /** What changed since a node last looked: the rows and the latest write. */
  record Version(long rows, long lastChange) {}

  private final Database database;

  private final Webhooks webhooks;

  GuardrailStore(Database database, Webhooks webhooks) {
    this.webhooks = webhooks;
    this.database = database;
  }

  void insert(Guardrail guardrail) {
    database.write(h -> h.createUpdate("""
            INSERT INTO guardrails (id, org_id, name, spec, created_at, changed_at)
            VALUES (:id, :org, :name, :spec, :created, :changed)""")
        .bind("id", guardrail.id())
        .bind("org", guardrail.orgId())
        .bind("name", guardrail.name())
        .bind("spec", Json.write(GuardrailViews.spec(guardrail.spec())))
        .bind("created", guardrail.createdAt())
        .bind("changed", guardrail.updatedAt())
        .execute());
  }

  /** Writes the guardrail's new spec; false when there is no such guardrail any more. */
  boolean update(Guardrail guardrail) {
    return database.write(h -> h.createUpdate("""
            UPDATE guardrails SET name = :name, spec = :spec, changed_at = :changed
            WHERE org_id = :org AND id = :id""")
            .bind("id", guardrail.id())
            .bind("org", guardrail.orgId())
            .bind("name", guardrail.name())
            .bind("spec", Json.write(GuardrailViews.spec(guardrail.spec())))
            .bind("changed", guardrail.updatedAt())
            .execute())
        == 1;
  }

  boolean delete(String orgId, String id) {
    return database.write(
            h -> h.createUpdate("DELETE FROM guardrails WHERE org_id = :org AND id = :id")
                .bind("org", orgId)
                .bind("id", id)
                .execute())
        == 1;
  }

  Optional<Guardrail> get(String orgId, String id) {
    return database.read(
        h -> h.createQuery("SELECT * FROM guardrails WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map((rs, ctx) -> guardrail(rs))
            .findOne());
  }

  /** Every organization's guardrails, oldest first (what each node keeps in memory). */
  List<Guardrail> all() {
    return database.read(h -> h.createQuery("SELECT * FROM guardrails ORDER BY created_at, id")
        .map((rs, ctx) -> guardrail(rs))
        .list());
  }

  /** How many guardrails the organization has. */
  int count(String orgId) {
    return database.read(h -> h.createQuery("SELECT COUNT(*) FROM guardrails WHERE org_id = :org")
        .bind("org", orgId)
        .mapTo(Integer.class)
        .one());
  }

  Version version() {
    return database.read(h -> h.createQuery(
            "SELECT COUNT(*) AS n, COALESCE(MAX(changed_at), 0) AS last FROM guardrails")
        .map((rs, ctx) -> new Version(rs.getLong("n"), rs.getLong("last")))
        .one());
  }

  private Guardrail guardrail(ResultSet rs) throws SQLException {
    return Guardrail.of(
        rs.getString("id"),
        rs.getString("org_id"),
        GuardrailSpec.parse(Json.read(rs.getString("spec"), ObjectNode.class)),
        rs.getLong("created_at"),
        rs.getLong("changed_at"),
        webhooks);
  }
}
