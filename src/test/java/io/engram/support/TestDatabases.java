package io.engram.support;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * PostgreSQL for tests: a fresh schema per use in the local server (database {@code test}).
 * Outside CI a missing server skips the PostgreSQL tests with a message; with {@code CI=true}
 * it fails them, so CI never passes without having run them.
 */
public final class TestDatabases {
  private static final String BASE_URL = System.getenv()
      .getOrDefault(
          "ENGRAM_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test?user=postgres");

  private TestDatabases() {}

  /** A JDBC URL whose {@code currentSchema} is a new, empty schema. */
  public static String freshPostgresUrl() {
    String schema =
        "engram_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    SQLException unreachable = null;
    try (Connection connection = DriverManager.getConnection(BASE_URL);
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        throw new IllegalStateException(
            "PostgreSQL is required in CI but is not reachable at " + BASE_URL, e);
      }
      unreachable = e;
    }
    String reason = unreachable == null ? "" : unreachable.getMessage();
    assumeTrue(
        unreachable == null,
        () -> "PostgreSQL not reachable at " + BASE_URL + " (" + reason
            + "); PostgreSQL tests skipped outside CI. Run ./engram test to start it.");
    return BASE_URL + "&currentSchema=" + schema;
  }

  /**
   * The URL of the local Redis, checked to answer; skipped outside CI when it does not, a failure
   * in CI (as PostgreSQL).
   */
  public static String redisUrl() {
    String url = System.getenv().getOrDefault("ENGRAM_TEST_REDIS_URL", "redis://127.0.0.1:6379");
    java.net.URI uri = java.net.URI.create(url);
    boolean answers;
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()), 1000);
      socket
          .getOutputStream()
          .write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      socket.setSoTimeout(1000);
      answers = new String(
              socket.getInputStream().readNBytes(5), java.nio.charset.StandardCharsets.US_ASCII)
          .equals("+PONG");
    } catch (java.io.IOException e) {
      answers = false;
    }
    if (!answers && "true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException("Redis is required in CI but does not answer at " + url);
    }
    assumeTrue(
        answers,
        () -> "Redis does not answer at " + url
            + "; Redis tests skipped outside CI. Run ./engram test to start it.");
    return url;
  }

  /**
   * A new database {@code name} of the local server whose tables all live in {@code dir} (a
   * tablespace of the same name, the directory owned by the server's user): its JDBC URL.
   */
  public static String onTablespace(String name, java.nio.file.Path dir) {
    try (Connection connection = DriverManager.getConnection(BASE_URL);
        Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLESPACE " + name + " LOCATION '" + dir + "'");
      statement.execute("CREATE DATABASE " + name + " TABLESPACE " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("could not make database " + name + " in " + dir, e);
    }
    return BASE_URL.replaceFirst("/[^/?]+\\?", "/" + name + "?");
  }

  /** Drops a database made by {@link #onTablespace} and its tablespace. */
  public static void dropWithTablespace(String name) {
    try (Connection connection = DriverManager.getConnection(BASE_URL);
        Statement statement = connection.createStatement()) {
      statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      statement.execute("DROP TABLESPACE IF EXISTS " + name);
    } catch (SQLException e) {
      throw new IllegalStateException("could not drop database " + name, e);
    }
  }

  /** Drops a schema made by {@link #freshPostgresUrl()}. */
  public static void drop(String url) {
    String schema = url.substring(url.indexOf("currentSchema=") + "currentSchema=".length());
    try (Connection connection = DriverManager.getConnection(BASE_URL);
        Statement statement = connection.createStatement()) {
      statement.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    } catch (SQLException e) {
      throw new IllegalStateException("could not drop test schema " + schema, e);
    }
  }
}
