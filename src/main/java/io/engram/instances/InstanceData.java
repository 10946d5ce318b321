package io.engram.instances;

import io.engram.store.OrganizationData;
import io.engram.store.SnapshotRows;
import io.engram.store.SnapshotRows.OnConflict;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * The instances' own part in snapshots: retention policies and storage purchases (kept to be read:
 * the organization's, and money already charged) and the instance's conversation history, which a
 * restore puts back as the snapshot had it.
 */
final class InstanceData implements OrganizationData {
  @Override
  public Map<String, String> tables() {
    Map<String, String> tables = new LinkedHashMap<>();
    tables.put("retention_policies", "SELECT * FROM retention_policies WHERE org_id = :org");
    tables.put("storage_upgrades", "SELECT * FROM storage_upgrades WHERE org_id = :org");
    tables.put(
        "conversation_exchanges",
        "SELECT * FROM conversation_exchanges WHERE instance_id = :instance");
    return tables;
  }

  @Override
  public Restored restore(Handle h, SnapshotRows rows, Restoring restoring) {
    h.createUpdate("DELETE FROM conversation_exchanges WHERE instance_id = :instance")
        .bind("instance", restoring.instanceId())
        .execute();
    int written = SnapshotRows.writeAll(
        h, "conversation_exchanges", rows.of("conversation_exchanges"), OnConflict.KEEP);
    return new Restored(written, Set.of());
  }
}
