package io.engram.organizations;

import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;

/** Organizations in the system of record. */
public final class OrganizationStore {

  private static final RowMapper<Organization> MAPPER = (rs, ctx) -> new Organization(
      rs.getString("id"),
      rs.getString("name"),
      Plan.fromId(rs.getString("plan")).orElseThrow(),
      Rows.nullableLong(rs, "requests_per_minute"),
      Rows.instant(rs, "created_at"),
      Rows.instant(rs, "updated_at"));

  private final Database db;

  public OrganizationStore(Database db) {
    this.db = db;
  }

  public void insert(Organization org) {
    db.write(h -> h.createUpdate("""
            INSERT INTO organizations (id, name, plan, requests_per_minute, created_at, updated_at)
            VALUES (:id, :name, :plan, :requestsPerMinute, :createdAt, :updatedAt)""")
        .bind("id", org.id())
        .bind("name", org.name())
        .bind("plan", org.plan().id())
        .bind("requestsPerMinute", org.requestsPerMinute())
        .bind("createdAt", org.createdAt().toEpochMilli())
        .bind("updatedAt", org.updatedAt().toEpochMilli())
        .execute());
  }

  /** Writes the organization's new name, plan and budget with its audit entry, as one change. */
  public void update(Organization next, AuditEntry audit) {
    db.write(h -> {
      h.createUpdate("""
              UPDATE organizations SET name = :name, plan = :plan,
                requests_per_minute = :requestsPerMinute, updated_at = :updatedAt
              WHERE id = :id""")
          .bind("id", next.id())
          .bind("name", next.name())
          .bind("plan", next.plan().id())
          .bind("requestsPerMinute", next.requestsPerMinute())
          .bind("updatedAt", next.updatedAt().toEpochMilli())
          .execute();
      AuditLog.append(h, audit);
      return null;
    });
  }

  /** The organization, or the 404 its routes answer for one that does not exist. */
  public Organization get(String id) {
    return find(id).orElseThrow(() -> ApiException.notFound("Organization not found"));
  }

  public Optional<Organization> find(String id) {
    return db.read(h -> h.createQuery("SELECT * FROM organizations WHERE id = :id")
        .bind("id", id)
        .map(MAPPER)
        .findOne());
  }

  /** Organizations in id (creation) order, after the given id when paging. */
  public List<Organization> list(String afterId, int limit) {
    return db.read(
        h -> h.createQuery("SELECT * FROM organizations WHERE id > :after ORDER BY id LIMIT :limit")
            .bind("after", afterId == null ? "" : afterId)
            .bind("limit", limit)
            .map(MAPPER)
            .list());
  }
}
