package io.engram.platform.httpclient;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The read timeouts of every connection to an origin, kept by one watchdog thread instead of the
 * socket's own timeout. A virtual thread blocked in a read with {@code SO_TIMEOUT} parks with a
 * timer: the JDK schedules a task for every blocking read and cancels it when the bytes come, and
 * on the relay path (one or two such reads a request) that scheduling and the hand-offs it causes
 * were about a tenth of the gateway's CPU time per request (docs/benchmarks.md, issue 43). Here a
 * read writes its deadline and joins the watched set until it returns (a connection is watched
 * only while one of its reads waits, so one nobody closes is not held here); every
 * {@link #TICK_MILLIS} the watchdog closes the connections whose read has waited past it, which
 * makes that read fail at once, as a timeout. A timeout thus fires up to one tick late, which
 * none of the waits it bounds (seconds, or the short wait for the rest of a body before a
 * connection is reused) minds.
 */
final class ReadDeadlines {
  static final long TICK_MILLIS = 10;

  private static final Set<ClientConnection> WATCHED = ConcurrentHashMap.newKeySet();

  static {
    Thread.ofPlatform().daemon().name("origin-read-deadlines").start(ReadDeadlines::watch);
  }

  private ReadDeadlines() {}

  static void watch(ClientConnection connection) {
    WATCHED.add(connection);
  }

  static void forget(ClientConnection connection) {
    WATCHED.remove(connection);
  }

  private static void watch() {
    while (true) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS));
      long now = System.nanoTime();
      for (ClientConnection connection : WATCHED) {
        connection.closeIfReadExpired(now);
      }
    }
  }
}
