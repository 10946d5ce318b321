package io.engram.platform.http;

import io.javalin.http.Context;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
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
  /** Bytes in and out of each owned connection at the last {@link #sampleBytes}. */
  private final Map<Connection, Long> sampled = new ConcurrentHashMap<>();
  /** Bytes of connections closed since the last sample, by owner. */
  private final Map<String, Long> closedBytes = new ConcurrentHashMap<>();

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
      long since = sampled.getOrDefault(connection, 0L);
      closedBytes.merge(owner, traffic(connection) - since, Long::sum);
    }
    sampled.remove(connection);
  }

  /**
   * Bytes in and out per owner since the last call (the bandwidth an organization uses): what its
   * open connections moved, and what the ones that closed meanwhile moved last.
   */
  public Map<String, Long> sampleBytes() {
    Map<String, Long> moved = new java.util.HashMap<>();
    owners.forEach((connection, owner) -> {
      long now = traffic(connection);
      Long before = sampled.put(connection, now);
      moved.merge(owner, now - (before == null ? 0 : before), Long::sum);
    });
    for (String owner : Set.copyOf(closedBytes.keySet())) {
      Long bytes = closedBytes.remove(owner);
      if (bytes != null) {
        moved.merge(owner, bytes, Long::sum);
      }
    }
    return moved;
  }

  private static long traffic(Connection connection) {
    return Math.max(0, connection.getBytesIn()) + Math.max(0, connection.getBytesOut());
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
