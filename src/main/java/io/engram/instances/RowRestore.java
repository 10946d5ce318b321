package io.engram.instances;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.SqlStatement;

/**
 * Puts the organization's data back as a snapshot had it, inside the caller's transaction (all or
 * nothing). History is never rewritten: memories take their snapshot rows again (those made since
 * are tombstoned, so their uses and transitions still point somewhere) and each change is logged
 * for the index; an assistant whose capabilities differ gets a <em>new</em> version holding the
 * snapshot's set (actor {@code restore}), one made since is deleted as a client would; memory
 * settings and the instance's conversation history become the snapshot's. Configuration,
 * variables, retention and purchases stay as they are: they are the organization's, shared by all
 * its instances, and purchases are money already charged (the snapshot keeps them to read).
 */
final class RowRestore {
  /** What went back: rows written, and the memories whose index entries must follow. */
  record Result(int rows, Set<String> memoryIds) {}

  private static final Set<String> BINARY = Set.of("embedding");
  private static final int BATCH = 500;

  /** What changes whenever a memory row does: its state, last write, uses and reinforcements. */
  private static final String VERSION = "state || '|' || updated_at || '|' || last_used_at || '|'"
      + " || retrieval_count || '|' || reinforcement_count || '|' || older_use_count";

  private static String version(JsonNode memory) {
    return memory.get("state").asText() + "|" + memory.get("updated_at").asLong() + "|"
        + memory.get("last_used_at").asLong() + "|"
        + memory.get("retrieval_count").asLong() + "|"
        + memory.get("reinforcement_count").asLong() + "|"
        + memory.get("older_use_count").asLong();
  }

  private RowRestore() {}

  static Result apply(
      Handle h, Path tables, String orgId, String instanceId, String requestId, long now) {
    int rows = writeAll(h, "business_events", read(tables, "business_events"), "DO NOTHING");
    List<JsonNode> snapshotMemories = read(tables, "memories");
    Set<String> memories = new LinkedHashSet<>();
    snapshotMemories.forEach(memory -> memories.add(memory.get("id").asText()));
    // A memory whose row is as the snapshot has it is neither written nor re-indexed (at 100,000
    // memories re-indexing them all took 18 s): only what changed since goes back.
    Map<String, String> live = new java.util.HashMap<>();
    h.createQuery("SELECT id, " + VERSION + " AS version FROM memories WHERE org_id = :org")
        .bind("org", orgId)
        .map((rs, ctx) -> Map.entry(rs.getString("id"), rs.getString("version")))
        .forEach(entry -> live.put(entry.getKey(), entry.getValue()));
    List<JsonNode> changed = new ArrayList<>();
    for (JsonNode memory : snapshotMemories) {
      if (!version(memory).equals(live.get(memory.get("id").asText()))) {
        changed.add(memory);
      }
    }
    rows += writeAll(h, "memories", changed, null);
    Set<String> affected = new LinkedHashSet<>();
    changed.forEach(memory -> affected.add(memory.get("id").asText()));
    List<String> since = h.createQuery(
            "SELECT id FROM memories WHERE org_id = :org AND state <> 'tombstoned'")
        .bind("org", orgId)
        .mapTo(String.class)
        .list();
    for (String id : since) {
      if (!memories.contains(id)) {
        h.createUpdate("UPDATE memories SET state = 'tombstoned', updated_at = :now WHERE id = :id")
            .bind("now", now)
            .bind("id", id)
            .execute();
        affected.add(id);
      }
    }
    PreparedBatch changes =
        h.prepareBatch("INSERT INTO memory_changes (memory_id, changed_at) VALUES (:id, :now)");
    for (String id : affected) {
      changes.bind("id", id).bind("now", now).add();
    }
    if (!affected.isEmpty()) {
      changes.execute();
    }
    h.createUpdate("DELETE FROM memory_settings WHERE org_id = :org")
        .bind("org", orgId)
        .execute();
    rows += writeAll(h, "memory_settings", read(tables, "memory_settings"), "DO NOTHING");
    rows += assistants(h, tables, orgId, requestId, now);
    h.createUpdate("DELETE FROM conversation_exchanges WHERE instance_id = :instance")
        .bind("instance", instanceId)
        .execute();
    rows +=
        writeAll(h, "conversation_exchanges", read(tables, "conversation_exchanges"), "DO NOTHING");
    return new Result(rows, affected);
  }

  private static int assistants(Handle h, Path tables, String orgId, String requestId, long now) {
    int rows = 0;
    List<JsonNode> versions = read(tables, "assistant_capability_versions");
    Set<String> kept = new HashSet<>();
    for (JsonNode assistant : read(tables, "assistants")) {
      String id = assistant.get("id").asText();
      kept.add(id);
      Map<String, Object> live = h.createQuery("SELECT * FROM assistants WHERE id = :id")
          .bind("id", id)
          .mapToMap()
          .findOne()
          .orElse(null);
      if (live == null) {
        write(h, "assistants", assistant, "DO NOTHING");
        for (JsonNode version : versions) {
          if (version.get("assistant_id").asText().equals(id)) {
            write(h, "assistant_capability_versions", version, "DO NOTHING");
          }
        }
        rows++;
        continue;
      }
      if (same(live, assistant)) {
        continue;
      }
      long version = ((Number) live.get("version")).longValue() + 1;
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
          .bind("now", now)
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
          .bind("now", now)
          .bind("request", requestId)
          .execute();
      rows++;
    }
    List<String> made = h.createQuery(
            "SELECT id FROM assistants WHERE org_id = :org AND deleted_at IS NULL")
        .bind("org", orgId)
        .mapTo(String.class)
        .list();
    for (String id : made) {
      if (!kept.contains(id)) {
        h.createUpdate("UPDATE assistants SET deleted_at = :now, updated_at = :now WHERE id = :id")
            .bind("now", now)
            .bind("id", id)
            .execute();
        rows++;
      }
    }
    return rows;
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

  /** Writes one row of {@code table}; see {@link #writeAll}. */
  private static void write(Handle h, String table, JsonNode row, String onConflict) {
    writeAll(h, table, List.of(row), onConflict);
  }

  /**
   * Writes rows of {@code table} from their JSON lines, in batches (every line of a table has the
   * same columns, its {@code SELECT *}): inserted, or on a conflict on the key updated to the
   * line's values ({@code onConflict} null) or left ({@code "DO NOTHING"}). Returns the count.
   */
  private static int writeAll(Handle h, String table, List<JsonNode> rows, String onConflict) {
    if (rows.isEmpty()) {
      return 0;
    }
    List<String> columns = new ArrayList<>();
    rows.get(0).fieldNames().forEachRemaining(columns::add);
    String conflict = onConflict != null
        ? "ON CONFLICT DO NOTHING"
        : "ON CONFLICT (id) DO UPDATE SET "
            + columns.stream()
                .filter(c -> !c.equals("id"))
                .map(c -> c + " = excluded." + c)
                .collect(Collectors.joining(", "));
    String sql = "INSERT INTO " + table + " (" + String.join(", ", columns) + ") VALUES ("
        + columns.stream().map(c -> ":" + c).collect(Collectors.joining(", ")) + ") " + conflict;
    for (int from = 0; from < rows.size(); from += BATCH) {
      PreparedBatch batch = h.prepareBatch(sql);
      for (JsonNode row : rows.subList(from, Math.min(rows.size(), from + BATCH))) {
        for (String column : columns) {
          bind(batch, column, row.get(column));
        }
        batch.add();
      }
      batch.execute();
    }
    return rows.size();
  }

  private static void bind(SqlStatement<?> update, String column, JsonNode value) {
    if (value == null || value.isNull()) {
      update.bindNull(column, Types.NULL);
    } else if (BINARY.contains(column)) {
      update.bind(column, Base64.getDecoder().decode(value.asText()));
    } else if (value.isIntegralNumber()) {
      update.bind(column, value.asLong());
    } else if (value.isNumber()) {
      update.bind(column, value.asDouble());
    } else if (value.isBoolean()) {
      update.bind(column, value.asBoolean());
    } else {
      update.bind(column, value.asText());
    }
  }

  private static List<JsonNode> read(Path tables, String table) {
    Path file = tables.resolve(table + ".jsonl");
    List<JsonNode> rows = new ArrayList<>();
    if (!Files.exists(file)) {
      return rows;
    }
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (!line.isBlank()) {
          rows.add(Json.read(line, JsonNode.class));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the snapshot's " + table, e);
    }
    return rows;
  }
}
