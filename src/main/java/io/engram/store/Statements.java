package io.engram.store;

import io.engram.platform.Serving;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.LongAdder;
import org.jdbi.v3.core.statement.SqlLogger;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The statements a database ran, told apart by whether a request waited on them: those run while
 * a thread serves a request ({@link Serving}, which the HTTP server sets around every route) and
 * those of background work (batched writes of uses, usage
 * and history, housekeeping). A chat with memory off runs none on its request: the suite holds it
 * to that ({@code HotPathStatementsTest}), and {@code /metrics} shows both counts
 * ({@code engram_database_statements_total}), so a feature that adds a lookup to the hot path is
 * seen at once (issue 43).
 */
public final class Statements implements SqlLogger {
  private final LongAdder onRequests = new LongAdder();
  private final LongAdder inBackground = new LongAdder();

  /** Statements run while a request waited on them. */
  public long onRequests() {
    return onRequests.sum();
  }

  public long inBackground() {
    return inBackground.sum();
  }

  /** {@code engram_database_statements_total}, by {@code during} (request or background). */
  public void registerMetrics(MeterRegistry registry) {
    FunctionCounter.builder("engram.database.statements", this, Statements::onRequests)
        .description(
            "Database statements run, while a request waited on them or in background work")
        .tag("during", "request")
        .register(registry);
    FunctionCounter.builder("engram.database.statements", this, Statements::inBackground)
        .description(
            "Database statements run, while a request waited on them or in background work")
        .tag("during", "background")
        .register(registry);
  }

  private void count() {
    (Serving.now() ? onRequests : inBackground).increment();
  }

  @Override
  public void logAfterExecution(StatementContext context) {
    count();
  }

  @Override
  public void logException(StatementContext context, java.sql.SQLException ex) {
    count();
  }
}
