package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.store.OrganizationData;
import io.engram.store.SnapshotRows;
import io.engram.store.SnapshotRows.OnConflict;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * The memory's part in snapshots: its memories, events and settings. A restore never rewrites
 * history: memories take their snapshot rows again, those made since are tombstoned (so their uses
 * and transitions still point somewhere), and each change goes in the change log and the index.
 */
final class MemoryData implements OrganizationData {
  /** What changes whenever a memory row does: its state, last write, uses and reinforcements. */
  private static final String VERSION = "state || '|' || updated_at || '|' || last_used_at || '|'"
      + " || retrieval_count || '|' || reinforcement_count || '|' || older_use_count";

  private final MemoryIndex index;
  private final MemoryReads reads;

  MemoryData(MemoryIndex index, MemoryReads reads) {
    this.index = index;
    this.reads = reads;
  }

  @Override
  public Map<String, String> tables() {
    Map<String, String> tables = new LinkedHashMap<>();
    for (String table : List.of("memories", "business_events", "memory_settings")) {
      tables.put(table, "SELECT * FROM " + table + " WHERE org_id = :org");
    }
    return tables;
  }

  /** Uses are recorded in batches: those on their way land before the rows go back. */
  @Override
  public void settle() {
    reads.flushUses();
  }

  @Override
  public Restored restore(Handle h, SnapshotRows rows, Restoring restoring) {
    String orgId = restoring.orgId();
    int written =
        SnapshotRows.writeAll(h, "business_events", rows.of("business_events"), OnConflict.KEEP);
    List<JsonNode> snapshotMemories = rows.of("memories");
    Set<String> memories = new LinkedHashSet<>();
    snapshotMemories.forEach(row -> memories.add(row.get("id").asText()));
    // A memory whose row is as the snapshot has it is neither written nor re-indexed (at 100,000
    // memories re-indexing them all took 18 s): only what changed since goes back.
    Map<String, String> live = new HashMap<>();
    h.createQuery("SELECT id, " + VERSION + " AS version FROM memories WHERE org_id = :org")
        .bind("org", orgId)
        .map((rs, ctx) -> Map.entry(rs.getString("id"), rs.getString("version")))
        .forEach(entry -> live.put(entry.getKey(), entry.getValue()));
    List<JsonNode> changed = new ArrayList<>();
    for (JsonNode row : snapshotMemories) {
      if (!version(row).equals(live.get(row.get("id").asText()))) {
        changed.add(row);
      }
    }
    written += SnapshotRows.writeAll(h, "memories", changed, OnConflict.REPLACE);
    Set<String> affected = new LinkedHashSet<>();
    changed.forEach(row -> affected.add(row.get("id").asText()));
    List<String> since = h.createQuery(
            "SELECT id FROM memories WHERE org_id = :org AND state <> 'tombstoned'")
        .bind("org", orgId)
        .mapTo(String.class)
        .list();
    for (String id : since) {
      if (!memories.contains(id)) {
        h.createUpdate("UPDATE memories SET state = 'tombstoned', updated_at = :now WHERE id = :id")
            .bind("now", restoring.now())
            .bind("id", id)
            .execute();
        affected.add(id);
      }
    }
    PreparedBatch changes =
        h.prepareBatch("INSERT INTO memory_changes (memory_id, changed_at) VALUES (:id, :now)");
    for (String id : affected) {
      changes.bind("id", id).bind("now", restoring.now()).add();
    }
    if (!affected.isEmpty()) {
      changes.execute();
    }
    h.createUpdate("DELETE FROM memory_settings WHERE org_id = :org")
        .bind("org", orgId)
        .execute();
    written +=
        SnapshotRows.writeAll(h, "memory_settings", rows.of("memory_settings"), OnConflict.KEEP);
    return new Restored(written, affected);
  }

  private static String version(JsonNode row) {
    return row.get("state").asText() + "|" + row.get("updated_at").asLong() + "|"
        + row.get("last_used_at").asLong() + "|"
        + row.get("retrieval_count").asLong() + "|"
        + row.get("reinforcement_count").asLong() + "|"
        + row.get("older_use_count").asLong();
  }

  /** The index follows the memories put back and those tombstoned. */
  @Override
  public void restored(String orgId, Set<String> changed) {
    index.syncAll(orgId, changed);
    index.refresh();
  }
}
