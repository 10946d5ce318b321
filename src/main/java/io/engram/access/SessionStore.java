package io.engram.access;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Signed-in sessions, stored by the SHA-256 of their secret and of their CSRF token. */
public final class SessionStore {

  /** A stored session; {@code revokedAt} is null while it is signed in. */
  public record Session(
      String id,
      String userId,
      String orgId,
      String csrfHash,
      Instant expiresAt,
      Instant revokedAt,
      List<String> organizations) {}

  private final Database db;

  public SessionStore(Database db) {
    this.db = db;
  }

  public void insert(Session session, String secretHash, Instant createdAt) {
    db.write(h -> h.createUpdate("""
            INSERT INTO sessions
              (id, secret_hash, csrf_hash, user_id, org_id, created_at, expires_at, organizations)
            VALUES (:id, :hash, :csrf, :user, :org, :createdAt, :expiresAt, :organizations)""")
        .bind("id", session.id())
        .bind("hash", secretHash)
        .bind("csrf", session.csrfHash())
        .bind("user", session.userId())
        .bind("org", session.orgId())
        .bind("createdAt", createdAt.toEpochMilli())
        .bind("expiresAt", session.expiresAt().toEpochMilli())
        .bind("organizations", String.join(",", session.organizations()))
        .execute());
  }

  public Optional<Session> findBySecretHash(String secretHash) {
    return find("secret_hash", secretHash);
  }

  public Optional<Session> findById(String id) {
    return find("id", id);
  }

  private Optional<Session> find(String column, String value) {
    return db.read(h -> h.createQuery("SELECT * FROM sessions WHERE " + column + " = :value")
        .bind("value", value)
        .map((rs, ctx) -> new Session(
            rs.getString("id"),
            rs.getString("user_id"),
            rs.getString("org_id"),
            rs.getString("csrf_hash"),
            Rows.instant(rs, "expires_at"),
            Rows.nullableInstant(rs, "revoked_at"),
            organizations(rs.getString("organizations"), rs.getString("org_id"))))
        .findOne());
  }

  /** Sessions from before the column list their own organization only. */
  private static List<String> organizations(String stored, String own) {
    return stored == null || stored.isBlank() ? List.of(own) : List.of(stored.split(","));
  }

  public void revoke(String id, Instant at) {
    db.write(h -> h.createUpdate(
            "UPDATE sessions SET revoked_at = :at WHERE id = :id AND revoked_at IS NULL")
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .execute());
  }

  /** Removes sessions that ended before {@code before}; they can never authenticate again. */
  public int deleteEndedBefore(Instant before) {
    return db.write(
        h -> h.createUpdate("""
            DELETE FROM sessions WHERE expires_at < :before OR (revoked_at IS NOT NULL AND revoked_at < :before)""").bind("before", before.toEpochMilli()).execute());
  }
}
