package io.engram.access;

import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.Routes;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.module.Job;
import io.engram.platform.module.Module;
import io.engram.platform.net.ClientAddress;
import io.engram.platform.net.NetworkBoundary;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.settings.OrganizationConfigs;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * Who may do what: the guard every route asks, sign-in and sessions, and the sweep of sessions
 * that ended. The door of the routes that run a model is the gateway's; it is bound once the
 * gateway exists ({@link #admitInferenceThrough}), before the server takes requests.
 */
public final class AccessModule implements Module {
  private final SessionService sessions;
  private final Guard guard;
  private final EngramConfig config;
  private volatile InferenceDoor door;

  public AccessModule(
      CredentialService credentials,
      SessionService sessions,
      RateLimiter windows,
      HttpMetrics metrics,
      EngramConfig config,
      OrganizationConfigs configs,
      ConnectionOwners connections,
      NetworkBoundary network) {
    this.sessions = sessions;
    this.config = config;
    this.guard = new Guard(
        credentials,
        sessions,
        windows,
        metrics,
        config.access().apiKeyRequired(),
        config.access().rateLimitRequests(),
        configs,
        connections,
        trustedProxies(config.edge()),
        network,
        this::enterDoor);
  }

  private static ClientAddress trustedProxies(EngramConfig.Edge edge) {
    try {
      return ClientAddress.parse(String.join(",", edge.trustedProxies()));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(List.of("ENGRAM_TRUSTED_PROXIES: " + e.getMessage()));
    }
  }

  private AutoCloseable enterDoor(
      Principal caller, String windowKey, long windowLimit, Consumer<RateLimitDecision> report) {
    return door.enter(caller, windowKey, windowLimit, report);
  }

  /** Where the routes that run a model take their concurrency slot: the gateway's limits. */
  public void admitInferenceThrough(InferenceDoor door) {
    this.door = door;
  }

  public Guard guard() {
    return guard;
  }

  @Override
  public String name() {
    return "access";
  }

  @Override
  public void register(Routes routes) {
    new SessionRoutes(
            sessions,
            guard,
            config.server().maxBodyBytes(),
            config.access().cookieSecure(),
            Duration.ofMinutes(config.access().sessionTtlMinutes()))
        .register(routes);
  }

  /** Ended sessions can never authenticate again; deleting them keeps the table small. */
  @Override
  public List<Job> jobs() {
    return List.of(
        new Job("purge ended sessions", Duration.ZERO, Duration.ofHours(1), sessions::purgeEnded));
  }
}
