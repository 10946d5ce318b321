package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.store.OrganizationData;
import io.engram.store.SnapshotRows;
import io.engram.store.SnapshotRows.OnConflict;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * The assistants' part in snapshots: the assistants and their capability history. History is never
 * rewritten: an assistant whose capabilities differ gets a <em>new</em> version holding the
 * snapshot's set (actor {@code restore}), and one made since is deleted as a client would.
 */
public final class AssistantData implements OrganizationData {

  @Override
  public Map<String, String> tables() {
    Map<String, String> tables = new LinkedHashMap<>();
    tables.put("assistants", "SELECT * FROM assistants WHERE org_id = :org");
    tables.put(
        "assistant_capability_versions",
        "SELECT v.* FROM assistant_capability_versions v JOIN assistants a "
            + "ON a.id = v.assistant_id WHERE a.org_id = :org");
    return tables;
  }

  @Override
  public Restored restore(Handle h, SnapshotRows rows, Restoring restoring) {
    int written = 0;
    List<JsonNode> versions = rows.of("assistant_capability_versions");
    Set<String> kept = new HashSet<>();
    for (JsonNode assistant : rows.of("assistants")) {
      String id = assistant.get("id").asText();
      kept.add(id);
      Map<String, Object> live = h.createQuery("SELECT * FROM assistants WHERE id = :id")
          .bind("id", id)
          .mapToMap()
          .findOne()
          .orElse(null);
      if (live == null) {
        SnapshotRows.write(h, "assistants", assistant, OnConflict.KEEP);
        for (JsonNode version : versions) {
          if (version.get("assistant_id").asText().equals(id)) {
            SnapshotRows.write(h, "assistant_capability_versions", version, OnConflict.KEEP);
          }
        }
        written++;
      } else if (!same(live, assistant)) {
        newVersion(h, assistant, ((Number) live.get("version")).longValue() + 1, restoring);
        written++;
      }
    }
    List<String> made = h.createQuery(
            "SELECT id FROM assistants WHERE org_id = :org AND deleted_at IS NULL")
        .bind("org", restoring.orgId())
        .mapTo(String.class)
        .list();
    for (String id : made) {
      if (!kept.contains(id)) {
        h.createUpdate("UPDATE assistants SET deleted_at = :now, updated_at = :now WHERE id = :id")
            .bind("now", restoring.now())
            .bind("id", id)
            .execute();
        written++;
      }
    }
    return new Restored(written, Set.of());
  }

  /** The snapshot's set as the assistant's next version, recorded in its history. */
  private static void newVersion(Handle h, JsonNode assistant, long version, Restoring restoring) {
    String id = assistant.get("id").asText();
    h.createUpdate("""
            UPDATE assistants SET name = :name, type = :type, capabilities = :capabilities,
              capability_configs = :configs, deleted_at = :deleted, version = :version,
              updated_at = :now
            WHERE id = :id""")
        .bind("name", assistant.get("name").asText())
        .bind("type", assistant.get("type").asText())
        .bind("capabilities", assistant.get("capabilities").asText())
        .bind("configs", assistant.get("capability_configs").asText())
        .bind(
            "deleted",
            assistant.get("deleted_at").isNull()
                ? null
                : assistant.get("deleted_at").asLong())
        .bind("version", version)
        .bind("now", restoring.now())
        .bind("id", id)
        .execute();
    h.createUpdate("""
            INSERT INTO assistant_capability_versions (assistant_id, version, capabilities,
              capability_configs, changed_at, actor_kind, request_id)
            VALUES (:id, :version, :capabilities, :configs, :now, 'restore', :request)""")
        .bind("id", id)
        .bind("version", version)
        .bind("capabilities", assistant.get("capabilities").asText())
        .bind("configs", assistant.get("capability_configs").asText())
        .bind("now", restoring.now())
        .bind("request", restoring.requestId())
        .execute();
  }

  /** Whether the live assistant already is what the snapshot holds. */
  private static boolean same(Map<String, Object> live, JsonNode snapshot) {
    return Objects.equals(live.get("name"), snapshot.get("name").asText())
        && Objects.equals(live.get("type"), snapshot.get("type").asText())
        && Objects.equals(live.get("capabilities"), snapshot.get("capabilities").asText())
        && Objects.equals(
            live.get("capability_configs"), snapshot.get("capability_configs").asText())
        && (live.get("deleted_at") == null) == snapshot.get("deleted_at").isNull();
  }
}
