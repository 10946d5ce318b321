package io.engram.capabilities;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.LongPredicate;
import java.util.function.UnaryOperator;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * Assistants and their capability versions. The current set lives on the assistant row so reads
 * are one lookup; each change also appends a version row, in the same transaction.
 */
public final class AssistantStore {

  private static final RowMapper<Assistant> ASSISTANT = (rs, ctx) -> new Assistant(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("name"),
      AssistantType.fromId(rs.getString("type")).orElseThrow(),
      rs.getString("owner_user_id"),
      rs.getLong("version"),
      CapabilitySet.fromText(rs.getString("capabilities"), rs.getString("capability_configs")),
      Rows.instant(rs, "created_at"),
      Rows.instant(rs, "updated_at"));

  private static final RowMapper<CapabilityVersion> VERSION = (rs, ctx) -> new CapabilityVersion(
      rs.getString("assistant_id"),
      rs.getLong("version"),
      CapabilitySet.fromText(rs.getString("capabilities"), rs.getString("capability_configs")),
      Rows.instant(rs, "changed_at"),
      new Actor(
          rs.getString("actor_kind"),
          rs.getString("actor_credential_id"),
          rs.getString("actor_user_id")),
      rs.getString("request_id"));

  /** Which assistants a list shows: all, or the shared ones plus one user's personal ones (if any). */
  public record Visibility(boolean everything, String ownerUserId) {
    public static final Visibility ALL = new Visibility(true, null);
  }

  /** What a conditional replacement of the capability set came to. */
  public sealed interface Replacement {
    /** No such assistant in the organization (or it was deleted). */
    record Missing() implements Replacement {}

    /** The assistant is at a version the caller's precondition does not accept. */
    record Stale(long currentVersion) implements Replacement {}

    /** Another writer changed the assistant between this one's read and write; nothing was written. */
    record Raced() implements Replacement {}

    record Done(Assistant assistant) implements Replacement {}
  }

  private final Database db;

  public AssistantStore(Database db) {
    this.db = db;
  }

  /** Inserts a new assistant and its first capability version together. */
  public void create(Assistant assistant, Actor actor, String requestId) {
    db.write(h -> {
      h.createUpdate("""
              INSERT INTO assistants (id, org_id, name, type, owner_user_id, version, capabilities,
                                      capability_configs, created_by, created_at, updated_at)
              VALUES (:id, :org, :name, :type, :owner, :version, :capabilities, :configs, :createdBy,
                      :createdAt, :createdAt)""")
          .bind("id", assistant.id())
          .bind("org", assistant.orgId())
          .bind("name", assistant.name())
          .bind("type", assistant.type().id())
          .bind("owner", assistant.ownerUserId())
          .bind("version", assistant.version())
          .bind("capabilities", assistant.capabilities().capabilitiesText())
          .bind("configs", assistant.capabilities().configsText())
          .bind("createdBy", actor.credentialId())
          .bind("createdAt", assistant.createdAt().toEpochMilli())
          .execute();
      insertVersion(h, assistant, actor, requestId);
      return null;
    });
  }

  public Optional<Assistant> find(String orgId, String id) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM assistants WHERE org_id = :org AND id = :id AND deleted_at IS NULL")
        .bind("org", orgId)
        .bind("id", id)
        .map(ASSISTANT)
        .findOne());
  }

  /**
   * The organization's assistants visible under {@code visibility}, in id (creation) order after
   * {@code afterId}; with a type, only that type.
   */
  public List<Assistant> list(
      String orgId, Visibility visibility, AssistantType type, String afterId, int limit) {
    String visibleToUser = visibility.everything() ? null : visibility.ownerUserId();
    // Optional filters are added as clauses rather than ":x IS NULL OR ..." tests, which
    // PostgreSQL cannot type when the parameter is null.
    String sql =
        "SELECT * FROM assistants WHERE org_id = :org AND deleted_at IS NULL AND id > :after"
            + (visibility.everything()
                ? ""
                : " AND (type = 'org_shared'"
                    + (visibleToUser == null ? ")" : " OR owner_user_id = :user)"))
            + (type == null ? "" : " AND type = :type")
            + " ORDER BY id LIMIT :limit";
    return db.read(h -> {
      var query = h.createQuery(sql)
          .bind("org", orgId)
          .bind("after", afterId == null ? "" : afterId)
          .bind("limit", limit);
      if (visibleToUser != null) {
        query.bind("user", visibleToUser);
      }
      if (type != null) {
        query.bind("type", type.id());
      }
      return query.map(ASSISTANT).list();
    });
  }

  /** Gives the assistant a new name. False when there is no such (undeleted) assistant. */
  public boolean rename(String orgId, String id, String name, Instant at) {
    return db.write(h -> h.createUpdate("UPDATE assistants SET name = :name, updated_at = :at "
                + "WHERE org_id = :org AND id = :id AND deleted_at IS NULL")
            .bind("name", name)
            .bind("at", at.toEpochMilli())
            .bind("org", orgId)
            .bind("id", id)
            .execute()
        == 1);
  }

  /** Marks the assistant deleted; its history stays. False when there was nothing to delete. */
  public boolean markDeleted(String orgId, String id, Instant at) {
    return db.write(h -> h.createUpdate(
                "UPDATE assistants SET deleted_at = :at WHERE org_id = :org AND id = :id AND deleted_at IS NULL")
            .bind("at", at.toEpochMilli())
            .bind("org", orgId)
            .bind("id", id)
            .execute()
        == 1);
  }

  /**
   * Replaces the capability set in one transaction: reads the assistant, checks its version
   * against the caller's precondition (when given), asks {@code decide} for the next set (it may throw to refuse), and
   * writes it only if nobody else wrote in between (compare-and-set on the version).
   */
  public Replacement replace(
      String orgId,
      String id,
      LongPredicate acceptsVersion,
      Actor actor,
      String requestId,
      UnaryOperator<Assistant> decide) {
    return db.write(h -> {
      Optional<Assistant> found = h.createQuery(
              "SELECT * FROM assistants WHERE org_id = :org AND id = :id AND deleted_at IS NULL")
          .bind("org", orgId)
          .bind("id", id)
          .map(ASSISTANT)
          .findOne();
      if (found.isEmpty()) {
        return new Replacement.Missing();
      }
      Assistant current = found.get();
      if (acceptsVersion != null && !acceptsVersion.test(current.version())) {
        return new Replacement.Stale(current.version());
      }
      Assistant next = decide.apply(current);
      int updated = h.createUpdate("""
              UPDATE assistants SET version = :next, capabilities = :capabilities,
                                    capability_configs = :configs, updated_at = :at
              WHERE id = :id AND version = :current AND deleted_at IS NULL""")
          .bind("next", next.version())
          .bind("capabilities", next.capabilities().capabilitiesText())
          .bind("configs", next.capabilities().configsText())
          .bind("at", next.updatedAt().toEpochMilli())
          .bind("id", id)
          .bind("current", current.version())
          .execute();
      if (updated != 1) {
        return new Replacement.Raced();
      }
      insertVersion(h, next, actor, requestId);
      return new Replacement.Done(next);
    });
  }

  /** Versions older than {@code beforeVersion}, newest first. */
  public List<CapabilityVersion> versions(String assistantId, long beforeVersion, int limit) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM assistant_capability_versions
            WHERE assistant_id = :id AND version < :before ORDER BY version DESC LIMIT :limit""")
        .bind("id", assistantId)
        .bind("before", beforeVersion)
        .bind("limit", limit)
        .map(VERSION)
        .list());
  }

  /** The version in force at {@code at}: the last one written at or before it. */
  public Optional<CapabilityVersion> inForceAt(String assistantId, Instant at) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM assistant_capability_versions
            WHERE assistant_id = :id AND changed_at <= :at ORDER BY version DESC LIMIT 1""")
        .bind("id", assistantId)
        .bind("at", at.toEpochMilli())
        .map(VERSION)
        .findOne());
  }

  /** Appends the version row of the assistant's current set. */
  private static void insertVersion(Handle h, Assistant assistant, Actor actor, String requestId) {
    h.createUpdate("""
            INSERT INTO assistant_capability_versions (assistant_id, version, capabilities, capability_configs,
                changed_at, actor_kind, actor_credential_id, actor_user_id, request_id)
            VALUES (:id, :version, :capabilities, :configs, :at, :kind, :credential, :user, :request)""")
        .bind("id", assistant.id())
        .bind("version", assistant.version())
        .bind("capabilities", assistant.capabilities().capabilitiesText())
        .bind("configs", assistant.capabilities().configsText())
        .bind("at", assistant.updatedAt().toEpochMilli())
        .bind("kind", actor.kind())
        .bind("credential", actor.credentialId())
        .bind("user", actor.userId())
        .bind("request", requestId)
        .execute();
  }
}
