package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.JDBCType;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore over live data puts back every restored table's rows exactly, whatever they hold: the
 * rows are generated, every nullable column null in some rows and set in others, a null before a
 * value and a value before a null (a batch binds its columns from its first row: a table holding
 * both once failed the whole restore), on SQLite and PostgreSQL. A restore that fails after the
 * files went back is undone, files and rows, and leaves the instance free for the next one.
 */
class RestoredRowsTest {
  /** Per table, the columns that identify a row (for comparing what came back). */
  private static final Map<String, String> TABLES = new LinkedHashMap<>();

  static {
    TABLES.put("business_events", "id");
    TABLES.put("memories", "id");
    TABLES.put("assistants", "id");
    TABLES.put("assistant_capability_versions", "assistant_id, version");
    TABLES.put("conversation_exchanges", "id");
  }

  private static final int ROWS = 14;

  @Test
  void everyColumnComesBackExactlyOnSqlite() throws Exception {
    try (TestServer server = TestServer.start()) {
      everyColumnComesBackExactly(server, new Random(41));
    }
  }

  @Test
  void everyColumnComesBackExactlyOnPostgres() throws Exception {
    try (TestServer server = TestServer.builder().postgres().start()) {
      everyColumnComesBackExactly(server, new Random(42));
    }
  }

  private void everyColumnComesBackExactly(TestServer server, Random random) throws Exception {
    Live live = Live.of(server);
    try (Connection db = DriverManager.getConnection(server.jdbcUrl())) {
      Generator generator = new Generator(db, live, random);
      generator.fill();
      Map<String, Map<String, Map<String, String>>> before = live.tables(db);
      for (String table : TABLES.keySet()) {
        assertThat(before.get(table)).as(table).hasSizeGreaterThanOrEqualTo(ROWS);
      }
      String snapshot = live.snapshot();

      generator.spoil();
      assertThat(live.tables(db)).isNotEqualTo(before);

      Http.Response restored = live.restore(snapshot);
      assertThat(restored.status()).as(restored.text()).isEqualTo(200);
      Map<String, Map<String, Map<String, String>>> after = live.tables(db);
      for (String table : TABLES.keySet()) {
        assertThat(after.get(table)).as(table).isEqualTo(before.get(table));
      }
      // What came back reads through the API as it did (metadata included).
      for (String id : generator.memories) {
        String agent = before.get("memories").get(id).get("agent");
        String endUser = before.get("memories").get(id).get("end_user_id");
        Http.Call read = server
            .http
            .get((agent.equals("null") ? "/v1/memory/" : "/v1/memory/agents/" + agent + "/") + id)
            .bearer(server.token(
                live.orgId, agent.equals("null") ? null : List.of(agent), "memory:read"));
        // An end user's memory is read in that user's boundary.
        Http.Response memory =
            (endUser.equals("null") ? read : read.header("X-Engram-User", endUser)).send();
        assertThat(memory.status()).as(id + " " + memory.text()).isEqualTo(200);
      }
      assertThat(live.restoreStatus(db)).isEqualTo("complete");
    }
  }

  @Test
  void aRestoreThatFailsAfterTheFilesWentBackIsUndoneAndTheNextOneRuns() throws Exception {
    try (TestServer server = TestServer.start()) {
      failsAndIsUndone(server);
    }
  }

  @Test
  void aRestoreThatFailsIsUndoneOnPostgresToo() throws Exception {
    try (TestServer server = TestServer.builder().postgres().start()) {
      failsAndIsUndone(server);
    }
  }

  private void failsAndIsUndone(TestServer server) throws Exception {
    Live live = Live.of(server);
    live.put("data/a.txt", "as in the snapshot");
    live.remember("Acme renews in March");
    String snapshot = live.snapshot();
    live.put("data/a.txt", "changed since");
    live.put("data/b.txt", "made since");
    String since = live.remember("Initech churned in the spring");

    // A row the database refuses (its text is required), in a snapshot that otherwise verifies.
    Path dir = server.dataDir().resolve("snapshots").resolve(snapshot);
    Path memories = dir.resolve("tables").resolve("memories.jsonl");
    ObjectNode refused =
        (ObjectNode) Json.read(Files.readAllLines(memories).get(0), JsonNode.class);
    refused.put("id", "mem_refused").putNull("text");
    Files.writeString(
        memories, Json.write(refused) + "\n", java.nio.file.StandardOpenOption.APPEND);
    resealTable(dir, "memories");

    Http.Response failed = live.restore(snapshot);
    assertThat(failed.status()).as(failed.text()).isEqualTo(500);
    assertThat(failed.json().at("/error/code").asText()).isEqualTo("restore_failed");
    assertThat(failed.json().at("/error/message").asText()).contains("was undone");
    // Undone: the files and rows are as they were before the restore.
    assertThat(live.read("data/a.txt")).isEqualTo("changed since");
    assertThat(live.read("data/b.txt")).isEqualTo("made since");
    assertThat(live.memory(since).json().get("state").asText()).isNotEqualTo("tombstoned");
    try (Connection db = DriverManager.getConnection(server.jdbcUrl())) {
      assertThat(live.restoreStatus(db)).isEqualTo("rolled_back");
    }

    // The instance is free: a good snapshot restores at once.
    String good = live.snapshot();
    live.put("data/a.txt", "third");
    Http.Response next = live.restore(good);
    assertThat(next.status()).as(next.text()).isEqualTo(200);
    assertThat(live.read("data/a.txt")).isEqualTo("changed since");
  }

  @Test
  void aRestoreStoppedWhileBeingUndoneIsUndoneAtTheNextStart(@TempDir Path dir) throws Exception {
    TestServer first = TestServer.builder().dataDir(dir).start();
    Live live = Live.of(first);
    live.put("data/a.txt", "before");
    String safety = live.snapshot();
    live.put("data/a.txt", "half restored");
    first.close();
    // What a node stopped in the middle of undoing leaves: the entry running, with its error.
    try (Connection db = DriverManager.getConnection(first.jdbcUrl());
        PreparedStatement insert = db.prepareStatement("INSERT INTO snapshot_restores (id,"
            + " org_id, instance_id, snapshot_id, safety_snapshot_id, status, started_at, error)"
            + " VALUES ('rst_undoing', ?, ?, ?, ?, 'running', 1, 'disk full')")) {
      insert.setString(1, live.orgId);
      insert.setString(2, live.nano);
      insert.setString(3, safety);
      insert.setString(4, safety);
      insert.executeUpdate();
    }
    try (TestServer again = TestServer.builder().dataDir(dir).start()) {
      Live restarted = new Live(again, live.orgId, live.nano);
      assertThat(restarted.read("data/a.txt")).isEqualTo("before");
      try (Connection db = DriverManager.getConnection(again.jdbcUrl())) {
        assertThat(restarted.restoreStatus(db)).isEqualTo("rolled_back");
      }
      Http.Response next = restarted.restore(safety);
      assertThat(next.status()).as(next.text()).isEqualTo(200);
    }
  }

  /** Makes the manifest's checksum of {@code table} that of its file again. */
  private static void resealTable(Path dir, String table) throws Exception {
    Path manifestFile = dir.resolve("manifest.json");
    JsonNode manifest = Json.read(Files.readString(manifestFile), JsonNode.class);
    String sha = HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256")
            .digest(Files.readAllBytes(dir.resolve("tables").resolve(table + ".jsonl"))));
    for (JsonNode entry : manifest.get("tables")) {
      if (entry.get("name").asText().equals(table)) {
        ((ObjectNode) entry).put("sha256", sha);
      }
    }
    Files.writeString(manifestFile, Json.write(manifest));
  }

  /** One organization's instance on a running server, through its HTTP API. */
  private record Live(TestServer server, String orgId, String nano, String token) {
    Live(TestServer server, String orgId, String nano) {
      this(
          server,
          orgId,
          nano,
          server.token(orgId, null, "memory:write", "memory:read", "memory:delete"));
    }

    static Live of(TestServer server) {
      String org = server.createOrganization("seed");
      String nano = server
          .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
          .json()
          .at("/data/0/id")
          .asText();
      return new Live(server, org, nano);
    }

    Http.Response op(Http.Call call) {
      return server.asOperator(call);
    }

    void put(String path, String text) {
      Http.Response put = op(server
          .http
          .method("PUT", "/v1/nano/" + nano + "/storage/files/" + path)
          .body("text/plain", text));
      assertThat(put.status()).as(put.text()).isIn(200, 201);
    }

    String read(String path) {
      Http.Response file = op(server.http.get("/v1/nano/" + nano + "/storage/files/" + path));
      return file.status() == 200 ? file.text() : null;
    }

    String remember(String text) {
      return remember(Map.of("text", text));
    }

    String remember(Map<String, Object> body) {
      Http.Response created =
          server.http.post("/v1/memory").bearer(token).json(Json.write(body)).send();
      assertThat(created.status()).as(created.text()).isEqualTo(201);
      return created.json().get("id").asText();
    }

    Http.Response memory(String id) {
      return server.http.get("/v1/memory/" + id).bearer(token).send();
    }

    String snapshot() {
      Http.Response taken =
          op(server.http.post("/v1/nano/" + nano + "/snapshot").json("{}"));
      assertThat(taken.status()).as(taken.text()).isEqualTo(201);
      return taken.json().get("id").asText();
    }

    Http.Response restore(String snapshot) {
      return op(server
          .http
          .post("/v1/nano/" + nano + "/restore")
          .json("{\"snapshot_id\":\"" + snapshot + "\",\"restore_path\":\"/\"}"));
    }

    String restoreStatus(Connection db) throws SQLException {
      try (PreparedStatement last = db.prepareStatement(
          "SELECT status FROM snapshot_restores WHERE instance_id = ? ORDER BY started_at"
              + " DESC, id DESC")) {
        last.setString(1, nano);
        try (ResultSet rs = last.executeQuery()) {
          return rs.next() ? rs.getString(1) : null;
        }
      }
    }

    /** Every restored table's rows of the organization, by key, each column as text. */
    Map<String, Map<String, Map<String, String>>> tables(Connection db) throws SQLException {
      Map<String, Map<String, Map<String, String>>> tables = new TreeMap<>();
      for (Map.Entry<String, String> table : TABLES.entrySet()) {
        String sql = table.getKey().equals("assistant_capability_versions")
            ? "SELECT v.* FROM assistant_capability_versions v JOIN assistants a"
                + " ON a.id = v.assistant_id WHERE a.org_id = ?"
            : "SELECT * FROM " + table.getKey() + " WHERE org_id = ?";
        Map<String, Map<String, String>> rows = new TreeMap<>();
        try (PreparedStatement select = db.prepareStatement(sql)) {
          select.setString(1, orgId);
          try (ResultSet rs = select.executeQuery()) {
            ResultSetMetaData meta = rs.getMetaData();
            while (rs.next()) {
              Map<String, String> row = new TreeMap<>();
              for (int c = 1; c <= meta.getColumnCount(); c++) {
                Object value = rs.getObject(c);
                row.put(
                    meta.getColumnName(c),
                    value instanceof byte[] bytes
                        ? HexFormat.of().formatHex(bytes)
                        : value instanceof Number number ? normal(number) : String.valueOf(value));
              }
              List<String> key = new ArrayList<>();
              for (String column : table.getValue().split(", ")) {
                key.add(row.get(column));
              }
              rows.put(String.join("/", key), row);
            }
          }
        }
        tables.put(table.getKey(), rows);
      }
      return tables;
    }

    private static String normal(Number number) {
      double value = number.doubleValue();
      return value == Math.rint(value) && Math.abs(value) < 1e15
          ? Long.toString(number.longValue())
          : Double.toString(value);
    }
  }

  /**
   * Rows for every restored table, generated from the columns the database reports: a required
   * column takes a real row's value (the server made it, so every reader understands it), a
   * nullable one is null or a value of its type. The first three rows of each table are all-null,
   * all-set, all-null, so every column has a null before a value and a value before a null; the
   * rest are random.
   */
  private static final class Generator {
    private final Connection db;
    private final Live live;
    private final Random random;
    private final List<String> events = new ArrayList<>();
    private final List<String> memories = new ArrayList<>();
    private final List<String> assistants = new ArrayList<>();
    private final Map<String, Supplier<Object>> meaningful = new LinkedHashMap<>();
    private int serial;

    Generator(Connection db, Live live, Random random) {
      this.db = db;
      this.live = live;
      this.random = random;
    }

    void fill() throws Exception {
      String userId = live.server
          .createUser(
              live.orgId,
              "owner-" + random.nextInt(1_000_000) + "@example.com",
              "member",
              "a-long-password-1")
          .get("id")
          .asText();
      // The server's jobs act on what is due: a memory that expired before the test clock's now is
      // tombstoned within 30 s, a memory without a digest is given one within a minute. Either
      // would change a row between the snapshot and the restore on a slow machine, so an expiry
      // is in the clock's future and a digest is always there.
      meaningful.put("expires_at", () -> 4_102_444_800_000L + random.nextInt(1 << 30));
      meaningful.put("metadata", () -> "{\"tier\":\"gold\",\"n\":" + random.nextInt(100) + "}");
      meaningful.put("event_id", () -> events.get(random.nextInt(events.size())));
      meaningful.put("owner_user_id", () -> userId);
      meaningful.put("agent", () -> "agent-" + random.nextInt(4));
      meaningful.put("end_user_id", () -> "user-" + random.nextInt(4));
      meaningful.put("capabilities", () -> "[]");
      meaningful.put("capability_configs", () -> "{}");

      // Real rows whose required values the generated ones borrow.
      String event = live.server
          .http
          .post("/v1/memory/events")
          .bearer(live.token)
          .json("{\"type\":\"note\",\"source\":\"crm\",\"text\":\"Acme called\","
              + "\"metadata\":{\"a\":1}}")
          .send()
          .json()
          .at("/event/id")
          .asText();
      String memory = live.remember(
          Map.of("text", "Acme renews in March", "metadata", Map.of("account", "acme")));
      live.remember("Globex prefers email");
      Http.Response assistant = live.server
          .http
          .post("/api/assistants")
          .bearer(live.server.apiKey(live.orgId, 1000, "admin"))
          .json("{\"name\":\"Front desk\",\"type\":\"org_shared\"}")
          .send();
      assertThat(assistant.status()).as(assistant.text()).isEqualTo(201);
      String desk = assistant.json().at("/assistant/_id").asText();

      generate("business_events", template("business_events", "id", event), events);
      generate("memories", template("memories", "id", memory), memories);
      generate("assistants", template("assistants", "id", desk), assistants);
      Map<String, Object> version = template("assistant_capability_versions", "assistant_id", desk);
      for (String id : assistants) {
        Map<String, Object> row = new LinkedHashMap<>(version);
        row.put("assistant_id", id);
        insertVariants("assistant_capability_versions", row, 3);
      }
      Map<String, Object> exchange = new LinkedHashMap<>();
      exchange.put("id", "cex_template");
      exchange.put("org_id", live.orgId);
      exchange.put("instance_id", live.nano);
      exchange.put("model", "tiny-demo");
      exchange.put("messages", "[{\"role\":\"user\",\"content\":\"hi\"}]");
      exchange.put("answer", "hello");
      exchange.put("prompt_tokens", 3L);
      exchange.put("completion_tokens", 1L);
      exchange.put("memory_tokens", 0L);
      exchange.put("bytes", 40L);
      exchange.put("created_at", 1_764_000_000_000L);
      generate("conversation_exchanges", exchange, new ArrayList<>());
    }

    /** After the snapshot: every generated row deleted, or (memories) every column flipped. */
    void spoil() throws SQLException {
      try (var statement = db.createStatement()) {
        statement.executeUpdate(
            "DELETE FROM conversation_exchanges WHERE org_id = '" + live.orgId + "'");
        statement.executeUpdate("DELETE FROM assistant_capability_versions WHERE assistant_id IN"
            + " (SELECT id FROM assistants WHERE org_id = '" + live.orgId + "' AND id LIKE"
            + " 'gen_%')");
        statement.executeUpdate("DELETE FROM memories WHERE org_id = '" + live.orgId + "' AND"
            + " event_id LIKE 'gen_%'");
        statement.executeUpdate("UPDATE memories SET event_id = NULL WHERE org_id = '" + live.orgId
            + "' AND event_id LIKE 'gen_%'");
        statement.executeUpdate(
            "DELETE FROM business_events WHERE org_id = '" + live.orgId + "' AND id LIKE 'gen_%'");
        statement.executeUpdate(
            "DELETE FROM assistants WHERE org_id = '" + live.orgId + "' AND id LIKE 'gen_%'");
        statement.executeUpdate("UPDATE memories SET metadata = CASE WHEN metadata IS NULL THEN"
            + " '{\"flipped\":true}' ELSE NULL END, subject = CASE WHEN subject IS NULL THEN"
            + " 'flipped' ELSE NULL END, confidence = confidence / 2, updated_at = updated_at + 1"
            + " WHERE org_id = '" + live.orgId + "' AND id LIKE 'gen_%'");
      }
    }

    private Map<String, Object> template(String table, String keyColumn, String key)
        throws SQLException {
      try (PreparedStatement select =
          db.prepareStatement("SELECT * FROM " + table + " WHERE " + keyColumn + " = ?")) {
        select.setString(1, key);
        try (ResultSet rs = select.executeQuery()) {
          assertThat(rs.next()).as(table + " " + key).isTrue();
          Map<String, Object> row = new LinkedHashMap<>();
          for (int c = 1; c <= rs.getMetaData().getColumnCount(); c++) {
            row.put(rs.getMetaData().getColumnName(c), rs.getObject(c));
          }
          return row;
        }
      }
    }

    private void generate(String table, Map<String, Object> template, List<String> ids)
        throws SQLException {
      for (int i = 0; i < ROWS; i++) {
        Map<String, Object> row = new LinkedHashMap<>(template);
        String id = "gen_" + table.charAt(0) + (serial++);
        row.put("id", id);
        ids.add(id);
        insert(table, row, i);
      }
    }

    private void insertVariants(String table, Map<String, Object> template, int count)
        throws SQLException {
      for (int i = 0; i < count; i++) {
        Map<String, Object> row = new LinkedHashMap<>(template);
        row.put("version", (long) (i + 1));
        insert(table, row, i);
      }
    }

    /** Row {@code i}: 0 and 2 leave every nullable column null, 1 sets them all, the rest draw. */
    private void insert(String table, Map<String, Object> template, int i) throws SQLException {
      List<String> columns = new ArrayList<>(template.keySet());
      String sql = "INSERT INTO " + table + " (" + String.join(", ", columns) + ") VALUES ("
          + String.join(", ", columns.stream().map(c -> "?").toList()) + ")";
      try (PreparedStatement insert = db.prepareStatement(sql)) {
        Map<String, Column> declared = columns(table);
        for (int c = 0; c < columns.size(); c++) {
          String name = columns.get(c);
          Column column = declared.get(name.toLowerCase(java.util.Locale.ROOT));
          Object value = template.get(name);
          if (name.equals("text_digest") && value == null) {
            value = valueFor(name, column.type());
          }
          if (column.nullable() && !name.equals("id") && !name.equals("text_digest")) {
            boolean set = i == 1 || (i > 2 && random.nextBoolean());
            value = set ? valueFor(name, column.type()) : null;
          }
          if (value == null) {
            insert.setNull(c + 1, column.type());
          } else {
            insert.setObject(c + 1, value);
          }
        }
        insert.executeUpdate();
      }
    }

    private Object valueFor(String column, int sqlType) {
      Supplier<Object> meaning = meaningful.get(column);
      if (meaning != null) {
        return meaning.get();
      }
      return switch (JDBCType.valueOf(sqlType)) {
        case INTEGER, BIGINT, SMALLINT, TINYINT -> 1_700_000_000_000L + random.nextInt(1 << 30);
        case REAL, FLOAT, DOUBLE, NUMERIC, DECIMAL -> random.nextDouble();
        case BINARY, VARBINARY, LONGVARBINARY, BLOB -> {
          byte[] bytes = new byte[8 + random.nextInt(16)];
          random.nextBytes(bytes);
          yield bytes;
        }
        default -> column + "-" + Long.toHexString(random.nextLong()) + " é \u00a0\"'";
      };
    }

    /** A column as the database declares it. */
    private record Column(int type, boolean nullable) {}

    private final Map<String, Map<String, Column>> declared = new LinkedHashMap<>();

    private Map<String, Column> columns(String table) throws SQLException {
      Map<String, Column> known = declared.get(table);
      if (known == null) {
        known = new LinkedHashMap<>();
        try (var statement = db.createStatement();
            ResultSet rs = statement.executeQuery("SELECT * FROM " + table + " WHERE 1 = 0")) {
          ResultSetMetaData meta = rs.getMetaData();
          for (int c = 1; c <= meta.getColumnCount(); c++) {
            known.put(
                meta.getColumnName(c).toLowerCase(java.util.Locale.ROOT),
                new Column(
                    meta.getColumnType(c), meta.isNullable(c) != ResultSetMetaData.columnNoNulls));
          }
        }
        declared.put(table, known);
      }
      return known;
    }
  }
}
