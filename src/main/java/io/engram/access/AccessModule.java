package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.config.ConfigException;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.http.ApiException;
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
import java.util.Optional;

/**
 * Who may do what: the {@link AccessChain} every route with a declared {@link Requirement} passes,
 * sign-in and sessions, the WebSocket's rules, and the sweep of sessions that ended. The door of
 * the routes that run a model is the gateway's; it is bound once the gateway exists ({@link
 * #admitInferenceThrough}), before the server takes requests.
 */
public final class AccessModule implements Module {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AccessModule.class);
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
        slot,
        new Bandwidths(metrics.registry(), config.access().deploymentBandwidthMbps()));
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

  /**
   * How the chain finds an organization by id: every request carries the lookup, so a route finds
   * the organization its path names through {@link Access#organization} ({@link
   * ManagedOrganization}), the one way a route resolves one.
   *
   * <p>API_KEY_REQUIRED=false with ENGRAM_OPEN_ORGANIZATION: the inference routes answer a request
   * without a credential as that organization (a principal with inference:chat only, its limits,
   * network boundary and rate window as any other). The organization must exist: start-up stops
   * otherwise. Without ENGRAM_OPEN_ORGANIZATION only /metrics opens, as the log says.
   */
  public void findOrganizationsWith(
      java.util.function.Function<String, Optional<Organization>> find) {
    chain.findOrganizationsWith(find);
    if (config.access().apiKeyRequired()) {
      return;
    }
    String orgId = config.access().openOrganization();
    if (orgId.isEmpty()) {
      LOG.warn("API_KEY_REQUIRED=false: /metrics answers without a key; every other route still"
          + " needs one (set ENGRAM_OPEN_ORGANIZATION to open an organization's inference routes)");
      return;
    }
    if (find.apply(orgId).isEmpty()) {
      throw new ConfigException(List.of("ENGRAM_OPEN_ORGANIZATION: no organization " + orgId));
    }
    LOG.warn(
        "API_KEY_REQUIRED=false: the inference routes answer requests without a key as"
            + " organization {} (inference:chat only); every other route still needs one",
        orgId);
    chain.openInferenceAs(() -> new Principal(
        Principal.Kind.CONTEXT_TOKEN,
        "open",
        find.apply(orgId)
            .orElseThrow(() -> ApiException.unauthorized(
                "missing_api_key", "The open organization " + orgId + " no longer exists")),
        java.util.Set.of(Scope.INFERENCE_CHAT.wireName()),
        null,
        null,
        null,
        null));
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
