package io.engram.access;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.mapper.RowMapper;

/** Context tokens, API keys and account keys, stored by the SHA-256 of their secret. */
public final class CredentialStore {

  private static final ObjectMapper JSON = Json.MAPPER;
  private static final RowMapper<Credential> MAPPER = (rs, ctx) -> new Credential(
      rs.getString("id"),
      CredentialKind.valueOf(rs.getString("kind").toUpperCase(java.util.Locale.ROOT)),
      rs.getString("org_id"),
      rs.getString("name"),
      rs.getString("hint"),
      readSet(rs.getString("grants")),
      rs.getString("agents") == null ? null : readList(rs.getString("agents")),
      Rows.nullableInt(rs, "rate_limit"),
      rs.getString("created_by"),
      Rows.instant(rs, "created_at"),
      Rows.nullableInstant(rs, "expires_at"),
      Rows.nullableInstant(rs, "revoked_at"),
      rs.getString("models") == null ? null : readList(rs.getString("models")),
      rs.getString("end_user_id"));

  private final Database db;

  public CredentialStore(Database db) {
    this.db = db;
  }

  public void insert(Credential credential, String secretHash) {
    db.write(h -> h.createUpdate("""
            INSERT INTO credentials (id, kind, org_id, name, secret_hash, hint, grants, agents, rate_limit,
                                     created_by, created_at, expires_at, revoked_at, models, end_user_id)
            VALUES (:id, :kind, :org, :name, :hash, :hint, :grants, :agents, :rateLimit,
                    :createdBy, :createdAt, :expiresAt, NULL, :models, :endUser)""")
        .bind("id", credential.id())
        .bind("kind", credential.kind().id())
        .bind("org", credential.orgId())
        .bind("name", credential.name())
        .bind("hash", secretHash)
        .bind("hint", credential.hint())
        .bind("grants", Json.write(credential.grants()))
        .bind("agents", credential.agents() == null ? null : Json.write(credential.agents()))
        .bind("rateLimit", credential.rateLimit())
        .bind("models", credential.models() == null ? null : Json.write(credential.models()))
        .bind("endUser", credential.endUser())
        .bind("createdBy", credential.createdBy())
        .bind("createdAt", credential.createdAt().toEpochMilli())
        .bind(
            "expiresAt",
            credential.expiresAt() == null ? null : credential.expiresAt().toEpochMilli())
        .execute());
  }

  public Optional<Credential> findBySecretHash(String secretHash) {
    return db.read(h -> h.createQuery("SELECT * FROM credentials WHERE secret_hash = :hash")
        .bind("hash", secretHash)
        .map(MAPPER)
        .findOne());
  }

  /** A credential of this kind in this organization (null org: account keys). */
  public Optional<Credential> find(CredentialKind kind, String orgId, String id) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM credentials WHERE id = :id AND kind = :kind
              AND (org_id = :org OR (org_id IS NULL AND :org IS NULL))""")
        .bind("id", id)
        .bind("kind", kind.id())
        .bind("org", orgId)
        .map(MAPPER)
        .findOne());
  }

  public List<Credential> list(CredentialKind kind, String orgId) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM credentials WHERE kind = :kind
              AND (org_id = :org OR (org_id IS NULL AND :org IS NULL)) ORDER BY id""")
        .bind("kind", kind.id())
        .bind("org", orgId)
        .map(MAPPER)
        .list());
  }

  /** Marks the credential revoked (the first revocation time is kept) and returns it. */
  public Optional<Credential> revoke(CredentialKind kind, String orgId, String id, Instant at) {
    db.write(h -> h.createUpdate("""
            UPDATE credentials SET revoked_at = :at WHERE id = :id AND kind = :kind AND revoked_at IS NULL
              AND (org_id = :org OR (org_id IS NULL AND :org IS NULL))""")
        .bind("at", at.toEpochMilli())
        .bind("id", id)
        .bind("kind", kind.id())
        .bind("org", orgId)
        .execute());
    return find(kind, orgId, id);
  }

  public int countActiveAccountKeys(Instant now) {
    return db.read(h -> h.createQuery("""
            SELECT COUNT(*) FROM credentials WHERE kind = :kind AND revoked_at IS NULL
              AND (expires_at IS NULL OR expires_at > :now)""")
        .bind("kind", CredentialKind.ACCOUNT_KEY.id())
        .bind("now", now.toEpochMilli())
        .mapTo(Integer.class)
        .one());
  }

  private static Set<String> readSet(String json) {
    return new LinkedHashSet<>(readList(json));
  }

  private static List<String> readList(String json) {
    try {
      return JSON.readValue(json, new TypeReference<List<String>>() {});
    } catch (java.io.IOException e) {
      throw new IllegalStateException("stored credential list is not JSON", e);
    }
  }
}
