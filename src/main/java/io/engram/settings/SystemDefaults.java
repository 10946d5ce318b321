package io.engram.settings;

import io.engram.platform.config.EngramConfig;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;

/**
 * The server's own values behind an organization's configuration: the system layer (timeouts,
 * WebSocket switch and idle time) and the instance layer the operator set in the environment
 * ({@code MAX_CONCURRENT_REQUESTS} and every variable set there, which override plan and
 * organization alike, as the spec's precedence puts instance variables above organization ones).
 */
public record SystemDefaults(
    int connectionTimeoutSeconds,
    int keepAliveSeconds,
    boolean webSocketsEnabled,
    int webSocketIdleSeconds,
    OptionalInt instanceConcurrency,
    Map<String, String> instanceVariables) {

  /** Jetty's idle timeout, which was the only one before organizations could set theirs. */
  public static final int CONNECTION_TIMEOUT_SECONDS = 30;

  public static final int KEEP_ALIVE_SECONDS = 30;

  public static SystemDefaults of(EngramConfig config) {
    EngramConfig.WebSocketSettings webSockets = config.inference().webSockets();
    return new SystemDefaults(
        CONNECTION_TIMEOUT_SECONDS,
        KEEP_ALIVE_SECONDS,
        webSockets.enabled(),
        (int) webSockets.idleTimeout().toSeconds(),
        config.inference().maxConcurrentRequests(),
        instanceVariables(config));
  }

  /** The variables the operator set in the environment: the instance layer. */
  private static Map<String, String> instanceVariables(EngramConfig config) {
    return Map.copyOf(new TreeMap<>(config.setByOperator()));
  }
}
