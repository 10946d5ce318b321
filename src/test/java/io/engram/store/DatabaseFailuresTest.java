package io.engram.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.jdbi.v3.core.statement.UnableToExecuteStatementException;
import org.junit.jupiter.api.Test;

/**
 * Which failed writes may pass later (kept for the next attempt) and which never will (the row is
 * dropped): by the SQLState PostgreSQL gives, SQLite's result code, or the kind of exception.
 */
class DatabaseFailuresTest {

  @Test
  void theDatabaseFailingIsTransientWhatTheRowHoldsIsNot() {
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("gone", "08006"))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("deadlock", "40P01"))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("disk full", "53100"))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(
            wrapped(new SQLTransientConnectionException("pool timed out"))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(new IllegalStateException("pool closed")))
        .isTrue();

    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("null model", "23502"))))
        .isFalse();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("bad bytes", "22021"))))
        .isFalse();
  }

  @Test
  void sqliteIsReadByItsResultCode() {
    // SQLITE_BUSY (5) and an extended code of it (SQLITE_BUSY_SNAPSHOT, 517) may pass later;
    // SQLITE_CONSTRAINT (19) and its NOT NULL form (1299) never will.
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("busy", null, 5))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("busy", null, 517))))
        .isTrue();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("constraint", null, 19))))
        .isFalse();
    assertThat(DatabaseFailures.isTransient(wrapped(new SQLException("not null", null, 1299))))
        .isFalse();
  }

  private static RuntimeException wrapped(SQLException cause) {
    return new UnableToExecuteStatementException(cause, null);
  }
}
