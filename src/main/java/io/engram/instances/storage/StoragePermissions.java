package io.engram.instances.storage;

import io.engram.access.Principal;
import io.engram.organizations.User;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Path permissions of an instance's storage for the organization's signed-in users. A rule gives
 * a user {@code read-only}, {@code read-write} or {@code none} on a path: a file, or a folder
 * ending in {@code /} and everything under it. For a file, the user's rule with the longest path
 * that covers it decides. With no rule, owners and admins may read and write and members may do
 * neither (they are let in by a rule). API keys and the operator are not signed-in users: their
 * permissions and scopes decide, as elsewhere.
 */
public final class StoragePermissions {
  /** What a rule allows. */
  public enum Access {
    NONE,
    READ_ONLY,
    READ_WRITE;

    public String wireName() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    public static Access of(String wireName) {
      for (Access access : values()) {
        if (access.wireName().equals(wireName)) {
          return access;
        }
      }
      throw ApiException.badRequest(
          "permissions", "'permissions' is one of read-only, read-write, none");
    }
  }

  /** One rule as stored. */
  public record Rule(String path, String userId, String email, Access access) {}

  private final Database db;
  private final Clock clock;

  public StoragePermissions(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  /** Sets the rule of each user on the path (all or none: the users were checked first). */
  public void set(
      String orgId, String instanceId, String path, Access access, List<User> users, String by) {
    long now = clock.millis();
    db.write(h -> {
      for (User user : users) {
        h.createUpdate("""
                INSERT INTO storage_permissions (instance_id, org_id, path, user_id, permission,
                  updated_at, updated_by)
                VALUES (:instance, :org, :path, :user, :permission, :now, :by)
                ON CONFLICT (instance_id, path, user_id) DO UPDATE SET
                  permission = excluded.permission, updated_at = excluded.updated_at,
                  updated_by = excluded.updated_by""")
            .bind("instance", instanceId)
            .bind("org", orgId)
            .bind("path", path)
            .bind("user", user.id())
            .bind("permission", access.wireName())
            .bind("now", now)
            .bind("by", by)
            .execute();
      }
      return null;
    });
  }

  public List<Rule> list(String instanceId) {
    return db.read(h -> h.createQuery("""
            SELECT p.path, p.user_id, u.email, p.permission FROM storage_permissions p
            JOIN users u ON u.id = p.user_id
            WHERE p.instance_id = :instance ORDER BY p.path, u.email""")
        .bind("instance", instanceId)
        .map((rs, ctx) -> new Rule(
            rs.getString("path"),
            rs.getString("user_id"),
            rs.getString("email"),
            Access.of(rs.getString("permission"))))
        .list());
  }

  /** What the caller may do with the path: everything, unless it is a signed-in user. */
  public Access accessOf(Principal caller, String instanceId, String path) {
    if (caller.kind() != Principal.Kind.SESSION) {
      return Access.READ_WRITE;
    }
    Optional<Access> ruled = rules(instanceId, caller.user().id()).stream()
        .filter(rule -> covers(rule.path(), path))
        .max(java.util.Comparator.comparingInt(rule -> rule.path().length()))
        .map(Rule::access);
    return ruled.orElse(caller.managesOrganization() ? Access.READ_WRITE : Access.NONE);
  }

  /** 403 unless the caller may read (or, with {@code write}, write) the path. */
  public void require(Principal caller, String instanceId, String path, boolean write) {
    Access access = accessOf(caller, instanceId, path);
    if (access == Access.NONE || write && access != Access.READ_WRITE) {
      throw ApiException.forbidden(
          "storage_permission_denied",
          "Your storage permission on " + path + " is " + access.wireName() + ": you may not "
              + (write ? "write" : "read") + " it");
    }
  }

  private List<Rule> rules(String instanceId, String userId) {
    return db.read(h -> h.createQuery("""
            SELECT path, user_id, permission FROM storage_permissions
            WHERE instance_id = :instance AND user_id = :user""")
        .bind("instance", instanceId)
        .bind("user", userId)
        .map((rs, ctx) -> new Rule(
            rs.getString("path"),
            rs.getString("user_id"),
            null,
            Access.of(rs.getString("permission"))))
        .list());
  }

  /** A rule's path covers a file when it is the file, or a folder it is in. */
  static boolean covers(String rulePath, String path) {
    return rulePath.endsWith("/") ? path.startsWith(rulePath) : path.equals(rulePath);
  }
}
