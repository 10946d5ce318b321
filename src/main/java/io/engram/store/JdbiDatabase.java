package io.engram.store;

import org.jdbi.v3.core.Jdbi;

/** What both databases do the same way once their connections exist: JDBI handles and transactions. */
abstract class JdbiDatabase implements Database {

  private final Jdbi reader;
  private final Jdbi writer;
  /** Null for an embedded database, which cannot be away. */
  private final Reachability reachability;

  JdbiDatabase(Jdbi reader, Jdbi writer, Reachability reachability) {
    this.reader = reader;
    this.writer = writer;
    this.reachability = reachability;
  }

  @Override
  public <R> R read(Work<R> work) {
    if (reachability == null) {
      return reader.withHandle(work::apply);
    }
    reachability.requireUp();
    try {
      return reader.withHandle(work::apply);
    } catch (RuntimeException e) {
      reachability.observe(e);
      throw e;
    }
  }

  @Override
  public <R> R write(Work<R> work) {
    if (reachability == null) {
      return writer.inTransaction(work::apply);
    }
    reachability.requireUp();
    try {
      return writer.inTransaction(work::apply);
    } catch (RuntimeException e) {
      reachability.observe(e);
      throw e;
    }
  }

  /** What to do once an away database answers again (before requests are let through). */
  final void whenBackAgain(Runnable back) {
    reachability.whenBack(back);
  }

  @Override
  public boolean isReachable() {
    if (reachability == null) {
      return trivialQuery();
    }
    return reachability.answers(this::trivialQuery);
  }

  private boolean trivialQuery() {
    try {
      return reader.withHandle(
              h -> h.createQuery("SELECT 1").mapTo(Integer.class).one())
          == 1;
    } catch (RuntimeException e) {
      if (reachability != null) {
        reachability.observe(e);
      }
      return false;
    }
  }
}
