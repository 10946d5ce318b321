package io.engram.platform.http;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;

/**
 * What an unexpected failure says about the server rather than the request: a disk with no room
 * left (507: the client may try again once an operator freed space) or a database that cannot be
 * reached (503 with {@code Retry-After}: it usually is back within seconds). Anything else stays a
 * 500. A request that ends in one of these was not acknowledged, and its transaction rolled back.
 */
public final class ServerFaults {
  /** SQLite's result code for a database or disk that is full. */
  private static final int SQLITE_FULL = 13;

  /** Seconds a client is told to wait after the database could not be reached. */
  public static final long DATABASE_RETRY_AFTER_SECONDS = 2;

  private static final java.util.concurrent.atomic.AtomicLong LAST_LOGGED =
      new java.util.concurrent.atomic.AtomicLong();

  private ServerFaults() {}

  /** True at most once every 5 seconds: requests failed by the same condition log one line. */
  public static boolean worthLogging() {
    long now = System.nanoTime();
    long last = LAST_LOGGED.get();
    return (last == 0 || now - last > 5_000_000_000L) && LAST_LOGGED.compareAndSet(last, now);
  }

  /** The answer for {@code failure}, or {@link ApiException#internal()} for a real defect. */
  public static ApiException answer(Throwable failure) {
    if (isDiskFull(failure)) {
      return ApiException.insufficientStorage(
          "The server has no room left to keep this; nothing was stored. Try again once space"
              + " was freed.");
    }
    if (isDatabaseUnavailable(failure)) {
      return ApiException.of(
          503,
          ErrorType.SERVER_ERROR,
          "database_unavailable",
          "The database cannot be reached; the request was not carried out. Try again shortly.",
          DATABASE_RETRY_AFTER_SECONDS);
    }
    return ApiException.internal();
  }

  /** Whether this is a 507 or a 503 (logged as a warning, not as a defect). */
  public static boolean isServerCondition(Throwable failure) {
    return isDiskFull(failure) || isDatabaseUnavailable(failure);
  }

  /** Whether the failure comes from a file system or database that is out of space. */
  public static boolean isDiskFull(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = next(cause)) {
      String message = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
      if (message.contains("no space left on device")
          || message.contains("disk quota exceeded")
          || message.contains("database or disk is full")) {
        return true;
      }
      if (cause instanceof SQLException sql
          && ("53100".equals(sql.getSQLState())
              || (sql.getSQLState() == null && (sql.getErrorCode() & 0xff) == SQLITE_FULL))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the database could not be reached or gave no connection in time: PostgreSQL's
   * connection errors (class 08) and shutdown (57P01-57P03), a pool's timed-out wait, a connection
   * closed under the statement.
   */
  public static boolean isDatabaseUnavailable(Throwable failure) {
    if (isConnectionLost(failure)) {
      return true;
    }
    for (Throwable cause = failure; cause != null; cause = next(cause)) {
      if (cause instanceof SQLTransientConnectionException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a connection to the database was lost or could not be opened (PostgreSQL's class 08,
   * its shutdown codes 57P01-57P03, a connection the driver found broken): not a pool that was only
   * busy.
   */
  public static boolean isConnectionLost(Throwable failure) {
    for (Throwable cause = failure; cause != null; cause = next(cause)) {
      if (cause instanceof SQLRecoverableException) {
        return true;
      }
      if (cause instanceof SQLException sql && sql.getSQLState() != null) {
        String state = sql.getSQLState();
        if (state.startsWith("08") || state.startsWith("57P")) {
          return true;
        }
      }
    }
    return false;
  }

  /** The innermost cause's message, for a log line. */
  public static String rootMessage(Throwable failure) {
    Throwable root = failure;
    while (next(root) != null) {
      root = next(root);
    }
    return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
  }

  private static Throwable next(Throwable cause) {
    if (cause instanceof SQLException sql && sql.getNextException() != null) {
      return sql.getNextException();
    }
    return cause.getCause() == cause ? null : cause.getCause();
  }
}
