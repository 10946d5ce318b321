package io.engram.store;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;

/**
 * Tells a write that failed because of what it wrote (a value the database refuses: trying it again
 * fails again) from one that failed because of the database (unreachable, busy, out of room: it may
 * pass later). Writers that queue work use it to drop a row that can never be written instead of
 * retrying it forever, and to keep everything else for the next attempt.
 */
public final class DatabaseFailures {
  /** SQLite's result codes for a database that is busy, locked, failing to read or write, or full. */
  private static final Set<Integer> SQLITE_TRANSIENT = Set.of(5, 6, 10, 13);

  private DatabaseFailures() {}

  /**
   * Whether the rows written had nothing to do with the failure. Anything that is not a database
   * error at all (a pool closed at shutdown, a timeout) counts as such: nothing is dropped on a
   * guess.
   */
  public static boolean isTransient(Throwable failure) {
    SQLException sql = sqlCause(failure);
    if (sql == null
        || sql instanceof SQLTransientException
        || sql instanceof SQLRecoverableException) {
      return true;
    }
    String state = sql.getSQLState();
    if (state == null || state.length() < 2) {
      return SQLITE_TRANSIENT.contains(sql.getErrorCode() & 0xff);
    }
    return switch (state.substring(0, 2)) {
      // connection, transaction rollback (serialization, deadlock), resources, operator, system
      case "08", "40", "53", "57", "58", "XX" -> true;
      default -> false;
    };
  }

  private static SQLException sqlCause(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
      if (cause instanceof SQLException sql) {
        return sql;
      }
    }
    return null;
  }
}
