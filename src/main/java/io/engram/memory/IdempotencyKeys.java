package io.engram.memory;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * Idempotency-Keys of memory writes, per organization and credential: a retried write answers what
 * the first one did, and the same key with another body is refused.
 */
public final class IdempotencyKeys {

  /** A stored idempotency key: the hash of the request it first came with, and that request's response. */
  public record IdempotentWrite(
      String requestHash, String memoryId, String response, Instant expiresAt) {}

  private final Database db;

  public IdempotencyKeys(Database db) {
    this.db = db;
  }

  /**
   * Claims the key for this request, inside the encode transaction. False when the key is already
   * held (by this request's earlier try, or a racing one, whose transaction has committed: on
   * PostgreSQL the insert waits for it). An expired key is released first.
   */
  public boolean claim(
      Handle h,
      String orgId,
      String credentialId,
      String key,
      String requestHash,
      String memoryId,
      String response,
      Instant now,
      Instant expiresAt) {
    h.createUpdate("""
            DELETE FROM memory_idempotency
            WHERE org_id = :org AND credential_id = :credential AND idempotency_key = :key AND expires_at <= :now""")
        .bind("org", orgId)
        .bind("credential", credentialId)
        .bind("key", key)
        .bind("now", now.toEpochMilli())
        .execute();
    return h.createUpdate("""
            INSERT INTO memory_idempotency (org_id, credential_id, idempotency_key, request_hash, memory_id, response,
                                            created_at, expires_at)
            VALUES (:org, :credential, :key, :hash, :memory, :response, :now, :expires)
            ON CONFLICT (org_id, credential_id, idempotency_key) DO NOTHING""")
            .bind("org", orgId)
            .bind("credential", credentialId)
            .bind("key", key)
            .bind("hash", requestHash)
            .bind("memory", memoryId)
            .bind("response", response)
            .bind("now", now.toEpochMilli())
            .bind("expires", expiresAt.toEpochMilli())
            .execute()
        == 1;
  }

  public Optional<IdempotentWrite> find(
      String orgId, String credentialId, String key, Instant now) {
    return db.read(h -> h.createQuery("""
            SELECT request_hash, memory_id, response, expires_at FROM memory_idempotency
            WHERE org_id = :org AND credential_id = :credential AND idempotency_key = :key AND expires_at > :now""")
        .bind("org", orgId)
        .bind("credential", credentialId)
        .bind("key", key)
        .bind("now", now.toEpochMilli())
        .map((rs, ctx) -> new IdempotentWrite(
            rs.getString("request_hash"),
            rs.getString("memory_id"),
            rs.getString("response"),
            Rows.instant(rs, "expires_at")))
        .findOne());
  }

  public int purgeExpired(Instant now) {
    return db.write(h -> h.createUpdate("DELETE FROM memory_idempotency WHERE expires_at <= :now")
        .bind("now", now.toEpochMilli())
        .execute());
  }
}
