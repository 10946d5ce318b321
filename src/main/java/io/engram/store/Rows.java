package io.engram.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/** Reading nullable columns the same way on SQLite and PostgreSQL (their drivers differ on getObject). */
public final class Rows {

  private Rows() {}

  public static Integer nullableInt(ResultSet rs, String column) throws SQLException {
    int value = rs.getInt(column);
    return rs.wasNull() ? null : value;
  }

  public static Long nullableLong(ResultSet rs, String column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : value;
  }

  /** A Unix-milliseconds column as an instant, or null. */
  public static Instant nullableInstant(ResultSet rs, String column) throws SQLException {
    long value = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochMilli(value);
  }

  public static Instant instant(ResultSet rs, String column) throws SQLException {
    return Instant.ofEpochMilli(rs.getLong(column));
  }
}
