package io.engram.store;

import io.engram.platform.http.ServerFaults;
import java.sql.Connection;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the database can be reached, known without waiting on it. Once a statement fails because
 * its connection was lost (PostgreSQL restarted, stopped, or unreachable), every request is refused
 * at once (503 with {@code Retry-After}, by {@link ServerFaults}) instead of each waiting for the
 * pool's timeout, and a prober opens a fresh connection every {@link #PROBE_EVERY} until one
 * answers: the service is back within that of the database. Readiness asks the same state, and
 * never waits more than {@link #READINESS_WAIT} for its own trivial query.
 */
final class Reachability {
  private static final Logger LOG = LoggerFactory.getLogger(Reachability.class);
  static final Duration PROBE_EVERY = Duration.ofMillis(200);
  static final Duration READINESS_WAIT = Duration.ofMillis(900);

  /** A connection opened outside the pool (which waits and backs off), for the prober. */
  interface Connect {
    Connection open() throws Exception;
  }

  private final String name;
  private final Connect connect;
  private volatile long downSince;
  private volatile Runnable onBack = () -> {};
  private final java.util.List<Runnable> afterBack =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private final AtomicReference<Thread> prober = new AtomicReference<>();
  private final AtomicReference<CompletableFuture<Boolean>> check = new AtomicReference<>();

  Reachability(String name, Connect connect) {
    this.name = name;
    this.connect = connect;
  }

  void whenBack(Runnable back) {
    this.onBack = back;
  }

  /**
   * What to do once requests are let through again, off the prober's thread: work left behind by
   * the outage (an index that could not read a committed change) is picked up at once rather than
   * at its job's next run.
   */
  void afterBack(Runnable back) {
    afterBack.add(back);
  }

  /** Refuses at once while the database is known to be away. */
  void requireUp() {
    long since = downSince;
    if (since != 0) {
      throw new DatabaseUnavailable(new SQLTransientConnectionException(
          "the " + name + " database has been unreachable for "
              + (System.currentTimeMillis() - since) + " ms",
          "08006"));
    }
  }

  /** Looks at a failed statement: a lost connection marks the database away until it answers. */
  void observe(RuntimeException failure) {
    if (ServerFaults.isConnectionLost(failure)) {
      down(failure);
    }
  }

  boolean isUp() {
    return downSince == 0;
  }

  /**
   * Whether {@code query} answers within {@link #READINESS_WAIT}; one query at a time however often
   * readiness is asked.
   */
  boolean answers(java.util.function.Supplier<Boolean> query) {
    if (!isUp()) {
      return false;
    }
    CompletableFuture<Boolean> running = check.get();
    if (running == null || running.isDone()) {
      CompletableFuture<Boolean> next = new CompletableFuture<>();
      if (check.compareAndSet(running, next)) {
        Thread.ofVirtual().name("database-readiness").start(() -> {
          try {
            next.complete(query.get());
          } catch (RuntimeException e) {
            observe(e);
            next.complete(false);
          }
        });
        running = next;
      } else {
        running = check.get();
      }
    }
    try {
      return running.get(READINESS_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private synchronized void down(RuntimeException failure) {
    if (downSince == 0) {
      downSince = System.currentTimeMillis();
      LOG.warn(
          "the {} database cannot be reached ({}); refusing requests with 503 until it"
              + " answers",
          name,
          ServerFaults.rootMessage(failure));
    }
    if (prober.get() == null) {
      Thread thread = Thread.ofVirtual().name("database-prober").unstarted(this::probe);
      if (prober.compareAndSet(null, thread)) {
        thread.start();
      }
    }
  }

  private void probe() {
    try {
      while (downSince != 0) {
        try (Connection connection = connect.open();
            Statement statement = connection.createStatement()) {
          statement.setQueryTimeout(2);
          statement.execute("SELECT 1");
          onBack.run();
          LOG.warn(
              "the {} database answers again after {} ms",
              name,
              System.currentTimeMillis() - downSince);
          downSince = 0;
          afterBack.forEach(back -> Thread.ofVirtual().name("database-back").start(back));
        } catch (Exception e) {
          Thread.sleep(PROBE_EVERY.toMillis());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      prober.set(null);
    }
  }

  /** A statement refused without trying: the database is known to be away. */
  static final class DatabaseUnavailable extends RuntimeException {
    DatabaseUnavailable(SQLTransientConnectionException cause) {
      super(cause.getMessage(), cause);
    }
  }
}
