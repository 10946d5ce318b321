package io.engram.store;

import org.jdbi.v3.core.Jdbi;

/** What both databases do the same way once their connections exist: JDBI handles and transactions. */
abstract class JdbiDatabase implements Database {

  private final Jdbi reader;
  private final Jdbi writer;
  /** Null for an embedded database, which cannot be away. */
  private final Reachability reachability;

  private final Statements statements = new Statements();

  JdbiDatabase(Jdbi reader, Jdbi writer, Reachability reachability) {
    this.reader = reader;
    this.writer = writer;
    this.reachability = reachability;
    reader.setSqlLogger(statements);
    writer.setSqlLogger(statements);
  }

  @Override
  public Statements statements() {
    return statements;
  }

  @Override
  public <R> R read(Work<R> work) {
    return guarded(() -> reader.withHandle(work::apply));
  }

  @Override
  public <R> R write(Work<R> work) {
    return guarded(() -> writer.inTransaction(work::apply));
  }

  /** Refused at once while the database is known away; a lost connection marks it away. */
  private <R> R guarded(java.util.function.Supplier<R> statement) {
    if (reachability == null) {
      return statement.get();
    }
    reachability.requireUp();
    try {
      return statement.get();
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
  public void afterOutage(Runnable back) {
    if (reachability != null) {
      reachability.afterBack(back);
    }
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
