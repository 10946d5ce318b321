package io.engram.store;

import org.jdbi.v3.core.Handle;

/**
 * The system of record. Two implementations: {@link SqliteDatabase} (embedded default, one
 * writer) and {@link PostgresDatabase} (shared by several nodes). Stores are written once in SQL
 * both dialects accept; what differs between the engines (connection handling, write
 * serialization, migrations) stays behind this seam.
 */
public interface Database extends AutoCloseable {

  enum Kind {
    SQLITE,
    POSTGRESQL
  }

  /** Work done with one handle; exceptions propagate unchecked. */
  @FunctionalInterface
  interface Work<R> {
    R apply(Handle handle);
  }

  Kind kind();

  /** Runs read-only work on a pooled connection. */
  <R> R read(Work<R> work);

  /** Runs work in one transaction; committed (and durable) when this returns. */
  <R> R write(Work<R> work);

  /** The statements it ran, on requests and in the background. */
  Statements statements();

  /**
   * Runs {@code back} each time the database answers again after it was found away (never for a
   * database that cannot go away, such as an embedded SQLite file).
   */
  default void afterOutage(Runnable back) {}

  /** True when the database answers a trivial query. */
  boolean isReachable();

  @Override
  void close();
}
