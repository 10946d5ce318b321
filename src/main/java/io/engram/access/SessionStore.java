package io.engram.access;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
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
      Instant revokedAt) {}

  private final Database db;

  public SessionStore(Database db) {
    this.db = db;
  }

  public void insert(Session session, String secretHash, Instant createdAt) {
    db.write(h -> h.createUpdate("""
            INSERT INTO sessions (id, secret_hash, csrf_hash, user_id, org_id, created_at, expires_at)
            VALUES (:id, :hash, :csrf, :user, :org, :createdAt, :expiresAt)""")
        .bind("id", session.id())
        .bind("hash", secretHash)
        .bind("csrf", session.csrfHash())
        .bind("user", session.userId())
        .bind("org", session.orgId())
        .bind("createdAt", createdAt.toEpochMilli())
        .bind("expiresAt", session.expiresAt().toEpochMilli())
        .execute());
  }

  public Optional<Session> findBySecretHash(String secretHash) {
    return db.read(h -> h.createQuery("SELECT * FROM sessions WHERE secret_hash = :hash")
        .bind("hash", secretHash)
        .map((rs, ctx) -> new Session(
            rs.getString("id"),
            rs.getString("user_id"),
            rs.getString("org_id"),
            rs.getString("csrf_hash"),
            Rows.instant(rs, "expires_at"),
            Rows.nullableInstant(rs, "revoked_at")))
        .findOne());
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
