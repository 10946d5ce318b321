package io.engram.access;

import io.engram.platform.http.ApiException;
import io.engram.platform.http.ConnectionOwners;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.javalin.http.Context;

/**
 * The organization's open connections (network.max_connections): the request's connection counts
 * against them (429 and the connection closed past the cap), and takes the organization's
 * connection and keep-alive timeouts.
 */
final class ConnectionCap {
  private final ConnectionOwners connections;

  ConnectionCap(ConnectionOwners connections) {
    this.connections = connections;
  }

  void claim(Context ctx, Principal principal, EffectiveConfig config) {
    long maxConnections = config.count(ConfigField.MAX_CONNECTIONS);
    if (!connections.claim(ctx, principal.orgId(), maxConnections)) {
      ctx.header("Connection", "close");
      throw ApiException.rateLimited(
          "connection_limit_exceeded",
          "This organization already has " + maxConnections
              + " connections open, the most its configuration allows (network.max_connections); "
              + "reuse an open connection or retry when one closes",
          1);
    }
    ConnectionOwners.timeouts(
        ctx,
        config.seconds(ConfigField.CONNECTION_TIMEOUT),
        config.seconds(ConfigField.KEEPALIVE_TIMEOUT));
  }
}
