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
    List<Class<?>> types = new ArrayList<>();
    for (String column : columns) {
      types.add(typeOf(column, rows));
    }
    for (int from = 0; from < rows.size(); from += BATCH) {
      PreparedBatch batch = h.prepareBatch(sql);
      for (JsonNode row : rows.subList(from, Math.min(rows.size(), from + BATCH))) {
        for (int c = 0; c < columns.size(); c++) {
          bind(batch, columns.get(c), types.get(c), row.get(columns.get(c)));
        }
        batch.add();
      }
      batch.execute();
    }
    return rows.size();
  }

  /**
   * The one Java type a column is bound as in every row of a batch: a batch prepares its binders
   * from its first row, so a column bound as text in one row and as a bare null in the next failed
   * ({@code ClassCastException}) as soon as a table held both. Text wins over numbers (a column
   * that ever held text is a text column), a fraction over a whole number; {@code null} when the
   * column is null in every row.
   */
  private static Class<?> typeOf(String column, List<JsonNode> rows) {
    if (BINARY.contains(column)) {
      return byte[].class;
    }
    boolean text = false;
    boolean fraction = false;
    boolean whole = false;
    boolean truth = false;
    for (JsonNode row : rows) {
      JsonNode value = row.get(column);
      if (value == null || value.isNull()) {
        continue;
      }
      text |= !value.isNumber() && !value.isBoolean();
      fraction |= value.isNumber() && !value.isIntegralNumber();
      whole |= value.isIntegralNumber();
      truth |= value.isBoolean();
    }
    if (text) {
      return String.class;
    }
    if (fraction) {
      return Double.class;
    }
    if (whole) {
      return Long.class;
    }
    return truth ? Boolean.class : null;
  }

  private static void bind(SqlStatement<?> update, String column, Class<?> type, JsonNode value) {
    boolean absent = value == null || value.isNull();
    if (type == null) {
      update.bindNull(column, Types.NULL);
    } else if (type == byte[].class) {
      update.bindByType(
          column, absent ? null : Base64.getDecoder().decode(value.asText()), byte[].class);
    } else if (type == Long.class) {
      update.bindByType(column, absent ? null : value.asLong(), Long.class);
    } else if (type == Double.class) {
      update.bindByType(column, absent ? null : value.asDouble(), Double.class);
    } else if (type == Boolean.class) {
      update.bindByType(column, absent ? null : value.asBoolean(), Boolean.class);
    } else {
      update.bindByType(column, absent ? null : value.asText(), String.class);
    }
  }
}
