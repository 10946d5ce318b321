package io.engram.organizations;

import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * An organization's instances. Every organization has a default instance: made the first time one
 * is needed (a unique index keeps two nodes from making two), never deleted while it is the
 * default. Another organization's instance does not exist for a caller (404).
 */
public final class InstanceStore {
  public static final String DEFAULT_NAME = "default";
  public static final int MAX_NAME = 100;
  public static final int MAX_PER_ORGANIZATION = 100;

  private static final RowMapper<Instance> INSTANCE = (rs, ctx) -> new Instance(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("name"),
      Instance.Status.valueOf(rs.getString("status").toUpperCase(Locale.ROOT)),
      rs.getInt("is_default") == 1,
      Rows.instant(rs, "created_at"),
      rs.getString("created_by"),
      Rows.instant(rs, "updated_at"),
      Rows.nullableInstant(rs, "restarted_at"));

  private final Database db;
  private final Clock clock;

  public InstanceStore(Database db, Clock clock) {
    this.db = db;
    this.clock = clock;
  }

  /** The organization's running instances, its default first made if it has none yet. */
  public List<Instance> list(String orgId) {
    ensureDefault(orgId);
    return db.read(h -> h.createQuery(
            "SELECT * FROM instances WHERE org_id = :org AND status = 'running' ORDER BY id")
        .bind("org", orgId)
        .map(INSTANCE)
        .list());
  }

  /** The organization's default instance (made now if it has none). */
  public Instance defaultOf(String orgId) {
    return ensureDefault(orgId);
  }

  /** A running instance of the organization; 404 for any other id. */
  public Instance get(String orgId, String id) {
    return find(id)
        .filter(instance -> instance.orgId().equals(orgId))
        .orElseThrow(() -> notFound(id));
  }

  /** A running instance, whoever it belongs to (the caller checks the organization). */
  public Optional<Instance> find(String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM instances WHERE id = :id AND status = 'running'")
            .bind("id", id)
            .map(INSTANCE)
            .findOne());
  }

  /** Who changes an instance, for the organization's audit log. */
  public record By(String credentialId, String requestId) {}

  public Instance create(String orgId, String name, By by) {
    String createdBy = by.credentialId();
    ensureDefault(orgId);
    Instant now = clock.instant();
    String id = Ids.newId("nano", now.toEpochMilli());
    db.write(h -> {
      long count = h.createQuery(
              "SELECT COUNT(*) FROM instances WHERE org_id = :org AND status = 'running'")
          .bind("org", orgId)
          .mapTo(Long.class)
          .one();
      if (count >= MAX_PER_ORGANIZATION) {
        throw ApiException.conflict(
            "instance_limit",
            "An organization may have at most " + MAX_PER_ORGANIZATION + " instances");
      }
      requireFreeName(h, orgId, name, null);
      insert(h, id, orgId, name, now, createdBy);
      audit(h, orgId, "instance.create", by, "{\"instance_id\":\"" + id + "\"}");
      return null;
    });
    return get(orgId, id);
  }

  /** Renames the instance and/or makes it the default (the former default stops being one). */
  public Instance update(String orgId, String id, String name, boolean makeDefault, By by) {
    get(orgId, id);
    long now = clock.millis();
    db.write(h -> {
      if (name != null) {
        requireFreeName(h, orgId, name, id);
        h.createUpdate("UPDATE instances SET name = :name, updated_at = :now WHERE id = :id")
            .bind("name", name)
            .bind("now", now)
            .bind("id", id)
            .execute();
      }
      if (makeDefault) {
        h.createUpdate("UPDATE instances SET is_default = 0, updated_at = :now WHERE org_id = :org "
                + "AND is_default = 1 AND id <> :id")
            .bind("org", orgId)
            .bind("id", id)
            .bind("now", now)
            .execute();
        h.createUpdate("UPDATE instances SET is_default = 1, updated_at = :now WHERE id = :id")
            .bind("id", id)
            .bind("now", now)
            .execute();
      }
      audit(
          h,
          orgId,
          "instance.update",
          by,
          io.engram.platform.json.Json.write(java.util.Map.of(
              "instance_id", id, "name", name == null ? "" : name, "default", makeDefault)));
      return null;
    });
    return get(orgId, id);
  }

  /**
   * Marks the instance {@code deleting}: it disappears from every route at once, and the caller
   * removes its storage, then {@link #purge}s it. The default instance is kept (409): another one
   * is made the default first.
   */
  public Instance beginDelete(String orgId, String id, By by) {
    Instance instance = get(orgId, id);
    if (instance.isDefault()) {
      throw ApiException.conflict(
          "default_instance",
          "Instance " + id + " is the organization's default: make another instance the default "
              + "first (PATCH with \"default\": true)");
    }
    db.write(h -> {
      audit(h, orgId, "instance.delete", by, "{\"instance_id\":\"" + id + "\"}");
      return h.createUpdate(
              "UPDATE instances SET status = 'deleting', updated_at = :now WHERE id = :id")
          .bind("now", clock.millis())
          .bind("id", id)
          .execute();
    });
    return instance;
  }

  /** Instances whose deletion was accepted but not finished (a node stopped part way). */
  /**
   * Records that the instance's configuration was restarted, inside the caller's transaction (the
   * settings' restart applies its pending values in the same one).
   */
  public static void markRestarted(Handle h, String instanceId, long at) {
    h.createUpdate("UPDATE instances SET restarted_at = :at, updated_at = :at WHERE id = :id")
        .bind("at", at)
        .bind("id", instanceId)
        .execute();
  }

  public List<Instance> deleting() {
    return db.read(h -> h.createQuery("SELECT * FROM instances WHERE status = 'deleting'")
        .map(INSTANCE)
        .list());
  }

  /**
   * Forgets a deleted instance once its storage is gone; {@code alsoForget} deletes, in the same
   * transaction, what other domains keep of it (its variables are the settings').
   */
  public void purge(String id, java.util.function.BiConsumer<Handle, String> alsoForget) {
    db.write(h -> {
      alsoForget.accept(h, id);
      return h.createUpdate("DELETE FROM instances WHERE id = :id AND status = 'deleting'")
          .bind("id", id)
          .execute();
    });
  }

  private Instance ensureDefault(String orgId) {
    Optional<Instance> current = currentDefault(orgId);
    if (current.isPresent()) {
      return current.get();
    }
    Instant now = clock.instant();
    db.write(h -> {
      // Two nodes may both find none: the unique index on the default lets one of them in.
      if (h.createQuery("SELECT COUNT(*) FROM instances WHERE org_id = :org AND is_default = 1")
              .bind("org", orgId)
              .mapTo(Long.class)
              .one()
          == 0) {
        String name = nameFree(h, orgId, DEFAULT_NAME)
            ? DEFAULT_NAME
            : DEFAULT_NAME + "-" + now.toEpochMilli();
        h.createUpdate("""
                INSERT INTO instances (id, org_id, name, status, is_default, created_at, updated_at)
                VALUES (:id, :org, :name, 'running', 1, :now, :now)
                ON CONFLICT DO NOTHING""")
            .bind("id", Ids.newId("nano", now.toEpochMilli()))
            .bind("org", orgId)
            .bind("name", name)
            .bind("now", now.toEpochMilli())
            .execute();
      }
      return null;
    });
    return currentDefault(orgId).orElseThrow();
  }

  private Optional<Instance> currentDefault(String orgId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM instances WHERE org_id = :org AND is_default = 1")
            .bind("org", orgId)
            .map(INSTANCE)
            .findOne());
  }

  private static void insert(
      Handle h, String id, String orgId, String name, Instant at, String by) {
    h.createUpdate("""
            INSERT INTO instances (id, org_id, name, status, is_default, created_at, created_by,
              updated_at)
            VALUES (:id, :org, :name, 'running', 0, :at, :by, :at)""")
        .bind("id", id)
        .bind("org", orgId)
        .bind("name", name)
        .bind("at", at.toEpochMilli())
        .bind("by", by)
        .execute();
  }

  private void audit(Handle h, String orgId, String action, By by, String detail) {
    AuditLog.append(
        h,
        new AuditEntry(
            Ids.newId("aud", clock.millis()),
            orgId,
            clock.instant(),
            action,
            by.credentialId(),
            by.requestId(),
            detail));
  }

  private static void requireFreeName(Handle h, String orgId, String name, String except) {
    Optional<String> holder = h.createQuery(
            "SELECT id FROM instances WHERE org_id = :org AND name = :name AND status = 'running'")
        .bind("org", orgId)
        .bind("name", name)
        .mapTo(String.class)
        .findOne();
    if (holder.isPresent() && !holder.get().equals(except)) {
      throw ApiException.conflict(
          "instance_name_taken", "name", "The organization has an instance named " + name);
    }
  }

  private static boolean nameFree(Handle h, String orgId, String name) {
    return h.createQuery("SELECT COUNT(*) FROM instances WHERE org_id = :org AND name = :name")
            .bind("org", orgId)
            .bind("name", name)
            .mapTo(Long.class)
            .one()
        == 0;
  }

  private static ApiException notFound(String id) {
    return ApiException.notFound("instance_not_found", "nano_id", "No instance " + id);
  }
}
