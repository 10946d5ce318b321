package io.engram.store;

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
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.SqlStatement;

/**
 * The rows of a snapshot's tables (one JSON line a row, as {@code SELECT *} read them), and how a
 * domain writes them back into its own tables.
 */
public final class SnapshotRows {
  private static final Set<String> BINARY = Set.of("embedding");
  private static final int BATCH = 500;

  private final Path tables;

  public SnapshotRows(Path tables) {
    this.tables = tables;
  }

  /** The snapshot's rows of {@code table} (none when the snapshot has no such table). */
  public List<JsonNode> of(String table) {
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

  /** How a row that is already there is treated. */
  public enum OnConflict {
    /** Left as it is. */
    KEEP,
    /** Updated to the snapshot's values (by its {@code id}). */
    REPLACE
  }

  /** Writes one row of {@code table}; see {@link #writeAll}. */
  public static void write(Handle h, String table, JsonNode row, OnConflict onConflict) {
    writeAll(h, table, List.of(row), onConflict);
  }

  /**
   * Writes rows of {@code table} from their JSON lines, in batches (every line of a table has the
   * same columns, its {@code SELECT *}). Returns the count.
   */
  public static int writeAll(Handle h, String table, List<JsonNode> rows, OnConflict onConflict) {
    if (rows.isEmpty()) {
      return 0;
    }
    List<String> columns = new ArrayList<>();
    rows.get(0).fieldNames().forEachRemaining(columns::add);
    String conflict = onConflict == OnConflict.KEEP
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
}
