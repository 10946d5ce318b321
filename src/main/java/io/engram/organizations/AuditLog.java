package io.engram.organizations;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/** The audit trail of organizations' settings: appended in the transaction of the change. */
public final class AuditLog {
  private static final RowMapper<AuditEntry> MAPPER = (rs, ctx) -> new AuditEntry(
      rs.getString("id"),
      rs.getString("org_id"),
      Rows.instant(rs, "at"),
      rs.getString("action"),
      rs.getString("credential_id"),
      rs.getString("request_id"),
      rs.getString("detail"));

  private final Database db;

  public AuditLog(Database db) {
    this.db = db;
  }

  /** Appends within the caller's transaction, so a change and its record commit together. */
  public static void append(Handle h, AuditEntry entry) {
    h.createUpdate("""
            INSERT INTO organization_audit (id, org_id, at, action, credential_id, request_id, detail)
            VALUES (:id, :orgId, :at, :action, :credentialId, :requestId, :detail)""")
        .bind("id", entry.id())
        .bind("orgId", entry.orgId())
        .bind("at", entry.at().toEpochMilli())
        .bind("action", entry.action())
        .bind("credentialId", entry.credentialId())
        .bind("requestId", entry.requestId())
        .bind("detail", entry.detail())
        .execute();
  }

  /** The organization's entries, newest first, before the given id when paging. */
  public List<AuditEntry> list(String orgId, String beforeId, int limit) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM organization_audit
            WHERE org_id = :orgId AND (:before = '' OR id < :before)
            ORDER BY id DESC LIMIT :limit""")
        .bind("orgId", orgId)
        .bind("before", beforeId == null ? "" : beforeId)
        .bind("limit", limit)
        .map(MAPPER)
        .list());
  }
}
