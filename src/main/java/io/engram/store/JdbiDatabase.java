package io.engram.store;

import org.jdbi.v3.core.Jdbi;

/** What both databases do the same way once their connections exist: JDBI handles and transactions. */
abstract class JdbiDatabase implements Database {

  private final Jdbi reader;
  private final Jdbi writer;

  JdbiDatabase(Jdbi reader, Jdbi writer) {
    this.reader = reader;
    this.writer = writer;
  }

  @Override
  public <R> R read(Work<R> work) {
    return reader.withHandle(work::apply);
  }

  @Override
  public <R> R write(Work<R> work) {
    return writer.inTransaction(work::apply);
  }

  @Override
  public boolean isReachable() {
    try {
      return read(h -> h.createQuery("SELECT 1").mapTo(Integer.class).one()) == 1;
    } catch (RuntimeException e) {
      return false;
    }
  }
}
