package io.engram.platform.http;

import io.javalin.http.Context;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;

/**
 * Which owner (an organization) each open HTTP connection serves, so an owner's open connections
 * can be counted and capped, and their idle timeouts set per owner. A connection belongs to the
 * owner of the last request authenticated on it; it stops counting when it closes. Counts are per
 * node (the many-nodes issue makes them shared).
 */
public final class ConnectionOwners {
  private static final String KEEP_ALIVE = "engram.keepAlive";

  private final Map<Connection, String> owners = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

  /**
   * Claims the request's connection for {@code owner}. False, with nothing changed, when it is a
   * new connection of an owner that already has {@code limit} open.
   */
  public boolean claim(Context ctx, String owner, long limit) {
    Connection connection = connection(ctx);
    return connection == null || claim(connection, owner, limit);
  }

  /** {@link #claim(Context, String, long)} for a connection in hand. */
  public boolean claim(Connection connection, String owner, long limit) {
    String previous = owners.get(connection);
    if (owner.equals(previous)) {
      return true;
    }
    AtomicInteger count = counts.computeIfAbsent(owner, key -> new AtomicInteger());
    if (count.incrementAndGet() > limit) {
      count.decrementAndGet();
      return false;
    }
    if (previous == null) {
      connection.addEventListener(new Connection.Listener() {
        @Override
        public void onClosed(Connection closed) {
          release(closed);
        }
      });
    } else {
      counts.get(previous).decrementAndGet();
    }
    owners.put(connection, owner);
    return true;
  }

  private void release(Connection connection) {
    String owner = owners.remove(connection);
    if (owner != null) {
      counts.get(owner).decrementAndGet();
    }
  }

  /** Open connections of the owner on this node. */
  public int open(String owner) {
    AtomicInteger count = counts.get(owner);
    return count == null ? 0 : count.get();
  }

  /**
   * Timeouts of the request's connection: {@code whileHandling} applies now (a client that stops
   * sending its body or reading the answer for that long is cut off), {@code keepAlive} once the
   * answer is written, while the connection waits for the client's next request.
   */
  public static void timeouts(Context ctx, Duration whileHandling, Duration keepAlive) {
    EndPoint endPoint = endPoint(ctx);
    if (endPoint != null) {
      endPoint.setIdleTimeout(whileHandling.toMillis());
      ctx.attribute(KEEP_ALIVE, keepAlive);
    }
  }

  /** Called once the route has answered: the connection now idles until the next request. */
  static void afterResponse(Context ctx) {
    Duration keepAlive = ctx.attribute(KEEP_ALIVE);
    EndPoint endPoint = keepAlive == null ? null : endPoint(ctx);
    if (endPoint != null) {
      endPoint.setIdleTimeout(keepAlive.toMillis());
    }
  }

  private static EndPoint endPoint(Context ctx) {
    Connection connection = connection(ctx);
    return connection == null ? null : connection.getEndPoint();
  }

  private static Connection connection(Context ctx) {
    ServletContextRequest request = ServletContextRequest.getServletContextRequest(ctx.req());
    return request == null ? null : request.getConnectionMetaData().getConnection();
  }
}
