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

  /** What a role change did. */
  public enum RoleChange {
    CHANGED,
    NOT_FOUND,
    LAST_OWNER,
    /** The change grants or takes away ownership, and the caller is not allowed to. */
    OWNERS_ONLY
  }

  /**
   * Gives the user a role, unless that would leave the organization without an owner, or would
   * grant or take away ownership when {@code mayChangeOwners} is false (checked against the role
   * read in the same transaction). On PostgreSQL the organization's row is locked first, so two
   * owners demoting each other at once cannot both succeed; SQLite has one writer.
   */
  public RoleChange changeRole(String orgId, String userId, Role role, boolean mayChangeOwners) {
    return db.write(h -> {
      if (db.kind() == Database.Kind.POSTGRESQL) {
        h.createQuery("SELECT id FROM organizations WHERE id = :org FOR UPDATE")
            .bind("org", orgId)
            .mapTo(String.class)
            .findOne();
      }
      Optional<String> current = h.createQuery(
              "SELECT role FROM users WHERE org_id = :org AND id = :id")
          .bind("org", orgId)
          .bind("id", userId)
          .mapTo(String.class)
          .findOne();
      if (current.isEmpty()) {
        return RoleChange.NOT_FOUND;
      }
      boolean owner = current.get().equals(Role.OWNER.id());
      if (!mayChangeOwners && (owner || role == Role.OWNER)) {
        return RoleChange.OWNERS_ONLY;
      }
      if (owner && role != Role.OWNER) {
        long owners = h.createQuery(
                "SELECT COUNT(*) FROM users WHERE org_id = :org AND role = :owner")
            .bind("org", orgId)
            .bind("owner", Role.OWNER.id())
            .mapTo(Long.class)
            .one();
        if (owners <= 1) {
          return RoleChange.LAST_OWNER;
        }
      }
      h.createUpdate("UPDATE users SET role = :role WHERE org_id = :org AND id = :id")
          .bind("role", role.id())
          .bind("org", orgId)
          .bind("id", userId)
          .execute();
      return RoleChange.CHANGED;
    });
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
