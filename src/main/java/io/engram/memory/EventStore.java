package io.engram.memory;

import io.engram.store.Database;
import io.engram.store.Rows;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/** Developer events as received, with the staging decision each one led to. */
public final class EventStore {

  private static final RowMapper<BusinessEvent> EVENT = (rs, ctx) -> new BusinessEvent(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("agent"),
      rs.getString("end_user_id"),
      rs.getString("session_id"),
      rs.getString("type"),
      rs.getString("source"),
      rs.getString("subject"),
      rs.getString("text"),
      rs.getString("metadata"),
      rs.getString("staging"),
      rs.getString("credential_id"),
      rs.getString("user_id"),
      rs.getString("request_id"),
      Rows.instant(rs, "received_at"));

  private final Database db;

  public EventStore(Database db) {
    this.db = db;
  }

  public void insert(Handle h, BusinessEvent e) {
    h.createUpdate("""
            INSERT INTO business_events (id, org_id, agent, end_user_id, session_id, type, source, subject, text, metadata, staging,
                                         credential_id, user_id, request_id, received_at)
            VALUES (:id, :org, :agent, :endUser, :session, :type, :source, :subject, :text, :metadata, :staging, :credential, :user,
                    :request, :at)""")
        .bind("id", e.id())
        .bind("org", e.orgId())
        .bind("agent", e.agent())
        .bind("endUser", e.endUser())
        .bind("session", e.session())
        .bind("type", e.type())
        .bind("source", e.source())
        .bind("subject", e.subject())
        .bind("text", e.text())
        .bind("metadata", e.metadataJson())
        .bind("staging", e.stagingJson())
        .bind("credential", e.credentialId())
        .bind("user", e.userId())
        .bind("request", e.requestId())
        .bind("at", e.receivedAt().toEpochMilli())
        .execute();
  }

  /**
   * Removes what events said (text, subject, metadata, what they staged), in the caller's
   * transaction: the events that staged {@code memoryIds}, and with {@code endUser} every event of
   * that user at or beneath {@code agent} (null: any agent). How many events it emptied.
   */
  public int erase(
      Handle h, String orgId, Collection<String> memoryIds, String agent, String endUser) {
    String fromMemories = memoryIds.isEmpty()
        ? "1 = 0"
        : "id IN (SELECT event_id FROM memories WHERE id IN (<memories>)"
            + " AND event_id IS NOT NULL)";
    String ofUser = endUser == null
        ? "1 = 0"
        : "(end_user_id = :endUser" + (agent == null ? "" : " AND agent = :agent") + ")";
    var update = h.createUpdate("UPDATE business_events SET text = '', subject = NULL,"
            + " metadata = NULL, staging = '{}' WHERE org_id = :org AND text <> ''"
            + " AND (" + fromMemories + " OR " + ofUser + ")")
        .bind("org", orgId);
    if (!memoryIds.isEmpty()) {
      update.bindList("memories", List.copyOf(memoryIds));
    }
    if (endUser != null) {
      update.bind("endUser", endUser);
      if (agent != null) {
        update.bind("agent", agent);
      }
    }
    return update.execute();
  }

  public Optional<BusinessEvent> find(String orgId, String id) {
    return db.read(
        h -> h.createQuery("SELECT * FROM business_events WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .map(EVENT)
            .findOne());
  }

  /** Events newest first, with optional exact filters on type and source. */
  public List<BusinessEvent> list(
      String orgId, AgentScope scope, String type, String source, String beforeId, int limit) {
    return db.read(
        h -> h.createQuery("SELECT * FROM business_events WHERE org_id = :org AND id < :before"
                + " AND (:type IS NULL OR type = :type) AND (:source IS NULL OR source = :source) AND "
                + scope.sqlCondition() + " ORDER BY id DESC LIMIT :limit")
            .bind("org", orgId)
            .bind("before", beforeId == null ? "~" : beforeId)
            .bind("type", type)
            .bind("source", source)
            .bind("limit", limit)
            .bindMap(scope.sqlBindings())
            .map(EVENT)
            .list());
  }
}
