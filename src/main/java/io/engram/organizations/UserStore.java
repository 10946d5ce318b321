package io.engram.organizations;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;

/** Users of organizations; password hashes never leave this class except for verification. */
public final class UserStore {

  private static final RowMapper<User> MAPPER = (rs, ctx) -> new User(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("email"),
      rs.getString("name"),
      Role.fromId(rs.getString("role")).orElseThrow(),
      Rows.instant(rs, "created_at"));

  /** A user with the stored password hash, for sign-in. */
  public record WithPassword(User user, String passwordHash) {}

  private final Database db;

  public UserStore(Database db) {
    this.db = db;
  }

  /**
   * Inserts the user; returns false when the organization already has a user with that email.
   * The unique key decides (ON CONFLICT, understood by SQLite and PostgreSQL), so two concurrent
   * inserts of one email cannot both pass a check and then fail on the constraint.
   */
  public boolean insert(User user, String passwordHash) {
    return db.write(h -> h.createUpdate("""
              INSERT INTO users (id, org_id, email, name, role, password_hash, created_at)
              VALUES (:id, :org, :email, :name, :role, :password, :createdAt)
              ON CONFLICT (org_id, email) DO NOTHING""")
            .bind("id", user.id())
            .bind("org", user.orgId())
            .bind("email", user.email())
            .bind("name", user.name())
            .bind("role", user.role().id())
            .bind("password", passwordHash)
            .bind("createdAt", user.createdAt().toEpochMilli())
            .execute()
        == 1);
  }

  public Optional<User> find(String orgId, String id) {
    return db.read(h -> h.createQuery("SELECT * FROM users WHERE org_id = :org AND id = :id")
        .bind("org", orgId)
        .bind("id", id)
        .map(MAPPER)
        .findOne());
  }

  public List<User> list(String orgId) {
    return db.read(h -> h.createQuery("SELECT * FROM users WHERE org_id = :org ORDER BY id")
        .bind("org", orgId)
        .map(MAPPER)
        .list());
  }

  /** Every organization's user with this email, for sign-in without an organization id. */
  public List<WithPassword> findForSignIn(String email) {
    return db.read(h -> h.createQuery("SELECT * FROM users WHERE email = :email ORDER BY id")
        .bind("email", email)
        .map((rs, ctx) -> new WithPassword(MAPPER.map(rs, ctx), rs.getString("password_hash")))
        .list());
  }
}
