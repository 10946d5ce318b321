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
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.settings.OrganizationConfigs;
import java.time.Duration;
import java.util.List;

/**
 * Who may do what: the {@link AccessChain} every route with a declared {@link Requirement} passes,
 * sign-in and sessions, the WebSocket's rules, and the sweep of sessions that ended. The door of
 * the routes that run a model is the gateway's; it is bound once the gateway exists ({@link
 * #admitInferenceThrough}), before the server takes requests.
 */
public final class AccessModule implements Module {
  /** Failed sign-ins one client address may make in a minute. */
  static final int FAILED_SIGN_INS_PER_MINUTE = 10;

  private final SessionService sessions;
  private final EngramConfig config;
  private final AccessChain chain;
  private final InferenceSlot slot;
  private final RequestWindows windows;
  private final SocketAccess sockets;
  private final SignInThrottle signIns;

  public AccessModule(
      CredentialService credentials,
      SessionService sessions,
      RateLimiter rateLimiter,
      HttpMetrics metrics,
      EngramConfig config,
      OrganizationConfigs configs,
      ConnectionOwners connections,
      NetworkBoundary network) {
    this.sessions = sessions;
    this.config = config;
    Authentication authentication = new Authentication(credentials, sessions);
    NetworkBoundaryCheck boundary =
        new NetworkBoundaryCheck(trustedProxies(config.edge()), network);
    this.windows = new RequestWindows(
        rateLimiter, metrics, configs, credentials, config.access().rateLimitRequests());
    this.slot = new InferenceSlot(windows);
    this.chain = new AccessChain(
        authentication,
        config.access().apiKeyRequired(),
        configs,
        boundary,
        new ConnectionCap(connections),
        new CsrfCheck(),
        windows,
        slot);
    this.sockets = new SocketAccess(authentication, boundary, windows);
    this.signIns = new SignInThrottle(rateLimiter, metrics, boundary, FAILED_SIGN_INS_PER_MINUTE);
  }

  private static ClientAddress trustedProxies(EngramConfig.Edge edge) {
    try {
      return ClientAddress.parse(String.join(",", edge.trustedProxies()));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(List.of("ENGRAM_TRUSTED_PROXIES: " + e.getMessage()));
    }
  }

  /** Where the routes that run a model take their concurrency slot: the gateway's limits. */
  public void admitInferenceThrough(InferenceDoor door) {
    slot.bind(door);
  }

  /** The rules of inference over a WebSocket. */
  public SocketAccess sockets() {
    return sockets;
  }

  /** Each credential's requests-per-minute window as it stands (the usage route). */
  public RequestWindows windows() {
    return windows;
  }

  @Override
  public String name() {
    return "access";
  }

  @Override
  public void register(Routes routes) {
    routes.guardWith(chain);
    // Every guarded route of every module may set the rate-limit headers.
    routes.exposeHeaders(RequestWindows.HEADERS.toArray(String[]::new));
    new SessionRoutes(
            sessions,
            signIns,
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
