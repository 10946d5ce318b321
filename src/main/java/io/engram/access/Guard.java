package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.Caller;
import io.engram.platform.http.ConnectionOwners;
import io.engram.platform.http.RequestScoped;
import io.engram.platform.http.RouteFamily;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.net.ClientAddress;
import io.engram.platform.net.NetworkBoundary;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.slf4j.MDC;

/**
 * The first thing every protected route calls: it authenticates the request, checks what the
 * route requires, enforces CSRF for cookie sessions, applies the rate limit, and returns the
 * caller. Each method names one access rule, so a route reads as the rule it enforces.
 *
 * <p>Order matters: 401 (who are you) before 404 (another organization's ids do not exist for
 * you) before 403 (you may not do this here), so nothing leaks another organization's existence.
 */
public final class Guard {
  public static final String SESSION_COOKIE = "engram_session";
  public static final String CSRF_COOKIE = "engram_csrf";
  public static final String CSRF_HEADER = "X-CSRF-Token";
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");
  /** The headers {@link #limited} sets, for the module that exposes them to browsers. */
  public static final List<String> RATE_LIMIT_HEADERS = List.of(
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "x-ratelimit-limit-requests",
      "x-ratelimit-remaining-requests",
      "x-ratelimit-reset-requests");

  private final CredentialService credentials;
  private final SessionService sessions;
  private final RateLimiter rateLimiter;
  private final HttpMetrics metrics;
  private final boolean apiKeyRequired;
  private final int defaultKeyRateLimit;
  private final OrganizationConfigs configs;
  private final ConnectionOwners connections;
  private final ClientAddress clientAddress;
  private final NetworkBoundary network;
  private final InferenceDoor door;

  /**
   * @param clientAddress how the client's address is read (trusted proxies)
   * @param network custom domains and peerings, beyond the configuration's allowlist
   * @param door where routes that run a model take their concurrency slot with the rate window
   */
  public Guard(
      CredentialService credentials,
      SessionService sessions,
      RateLimiter rateLimiter,
      HttpMetrics metrics,
      boolean apiKeyRequired,
      int defaultKeyRateLimit,
      OrganizationConfigs configs,
      ConnectionOwners connections,
      ClientAddress clientAddress,
      NetworkBoundary network,
      InferenceDoor door) {
    this.credentials = credentials;
    this.sessions = sessions;
    this.rateLimiter = rateLimiter;
    this.metrics = metrics;
    this.apiKeyRequired = apiKeyRequired;
    this.defaultKeyRateLimit = defaultKeyRateLimit;
    this.configs = configs;
    this.connections = connections;
    this.clientAddress = clientAddress;
    this.network = network;
    this.door = door;
  }

  /** The operator: an account-level key (or ENGRAM_ADMIN_KEY). */
  public Principal account(Context ctx) {
    Principal principal = authenticate(ctx);
    if (principal.kind() != Principal.Kind.ACCOUNT) {
      throw ApiException.forbidden(
          "insufficient_permissions", "This route needs an account-level key");
    }
    return principal;
  }

  /**
   * Managing one organization: the operator, an API key of that organization with {@code admin},
   * or a signed-in owner or admin of it. Another organization's credential gets 404, as if the
   * organization did not exist.
   */
  public Principal organizationAdmin(Context ctx, String orgId) {
    Principal principal = authenticate(ctx);
    if (principal.kind() == Principal.Kind.ACCOUNT) {
      // The operator reaches every organization; the operation itself answers 404 for a missing
      // one.
      return principal;
    }
    if (!orgId.equals(principal.orgId())) {
      throw organizationNotFound();
    }
    requireManager(principal);
    return limited(ctx, principal);
  }

  /**
   * Managing something an organization owns whose path does not name the organization (an
   * instance under {@code /v1/nano/{id}}): the operator, or an API key of the owner with
   * {@code admin}. {@code owner} gives the owning organization's id (empty: no such thing); what
   * another organization owns is answered {@code notFound}, as what does not exist is.
   */
  public Principal ownerAdmin(
      Context ctx,
      java.util.function.Supplier<java.util.Optional<String>> owner,
      java.util.function.Supplier<ApiException> notFound) {
    return ownerAdmin(authenticate(ctx), ctx, owner, notFound);
  }

  private Principal ownerAdmin(
      Principal principal,
      Context ctx,
      java.util.function.Supplier<java.util.Optional<String>> owner,
      java.util.function.Supplier<ApiException> notFound) {
    java.util.Optional<String> orgId = owner.get();
    if (orgId.isEmpty()
        || principal.kind() != Principal.Kind.ACCOUNT && !orgId.get().equals(principal.orgId())) {
      throw notFound.get();
    }
    if (principal.kind() == Principal.Kind.ACCOUNT) {
      return principal;
    }
    requireManager(principal);
    return limited(ctx, principal);
  }

  /**
   * The file API of something an organization owns: as {@link #ownerAdmin}, and also a signed-in
   * user of the owner (any role), whose path permissions the route checks.
   */
  public Principal ownerMember(
      Context ctx,
      java.util.function.Supplier<java.util.Optional<String>> owner,
      java.util.function.Supplier<ApiException> notFound) {
    Principal principal = authenticate(ctx);
    if (principal.kind() != Principal.Kind.SESSION) {
      return ownerAdmin(principal, ctx, owner, notFound);
    }
    java.util.Optional<String> orgId = owner.get();
    if (orgId.isEmpty() || !orgId.get().equals(principal.orgId())) {
      throw notFound.get();
    }
    return limited(ctx, principal);
  }

  /** Memory and gateway routes: a context access token with the scope. */
  public Principal scope(Context ctx, Scope scope) {
    Principal principal = authenticate(ctx);
    if (!principal.hasScope(scope)) {
      if (principal.kind() == Principal.Kind.SESSION) {
        throw roleRefused(principal);
      }
      throw ApiException.forbidden(
          "insufficient_scope",
          "This route needs a context access token with the scope " + scope.wireName());
    }
    return limited(ctx, principal);
  }

  /** An admin API key, or a signed-in owner or admin (the console's settings pages). */
  private static void requireManager(Principal principal) {
    if (principal.managesOrganization()) {
      return;
    }
    if (principal.kind() == Principal.Kind.SESSION) {
      throw roleRefused(principal);
    }
    throw ApiException.forbidden(
        "insufficient_permissions", "This route needs an API key with the admin permission");
  }

  /** A signed-in member on a route for the organization's owners and admins. */
  private static ApiException roleRefused(Principal principal) {
    return ApiException.forbidden(
        "insufficient_role",
        "Your role (" + principal.user().role().id()
            + ") may not do this; an owner or admin of the organization can");
  }

  /**
   * A context access token, whatever its scopes (the MCP server: each tool checks the scope it
   * needs, so a token sees the tools it may use).
   */
  public Principal contextToken(Context ctx) {
    Principal principal = authenticate(ctx);
    if (principal.kind() != Principal.Kind.CONTEXT_TOKEN) {
      throw ApiException.forbidden(
          "insufficient_permissions", "This route needs a context access token");
    }
    return limited(ctx, principal);
  }

  /** Extended routes: an API key with the permission (or admin). */
  public Principal permission(Context ctx, Permission permission) {
    Principal principal = authenticate(ctx);
    requirePermission(principal, permission);
    return limited(ctx, principal);
  }

  private static void requirePermission(Principal principal, Permission permission) {
    if (principal.hasPermission(permission)) {
      return;
    }
    if (principal.kind() == Principal.Kind.SESSION) {
      throw roleRefused(principal);
    }
    throw ApiException.forbidden(
        "insufficient_permissions",
        "This route needs an API key with the " + permission.wireName() + " permission");
  }

  /** Extended routes: an API key with any of the permissions (or admin). */
  public Principal anyPermission(Context ctx, Permission... permissions) {
    Principal principal = authenticate(ctx);
    for (Permission permission : permissions) {
      if (principal.hasPermission(permission)) {
        return limited(ctx, principal);
      }
    }
    throw ApiException.forbidden(
        "insufficient_permissions",
        "This route needs an API key with the "
            + java.util.Arrays.stream(permissions)
                .map(Permission::wireName)
                .collect(java.util.stream.Collectors.joining(" or "))
            + " permission");
  }

  /**
   * Inference on the current gateway and the extended surface alike: a context access token with
   * {@code inference:chat}, or an API key with {@code inference} (or admin).
   */
  public Principal inference(Context ctx) {
    return anyOf(ctx, Scope.INFERENCE_CHAT, Permission.INFERENCE);
  }

  /**
   * A route that runs a model (chat, responses, an assistant's chat): as {@link #inference}, and
   * with the credential's rate window one of its organization's concurrency slots is taken ({@link
   * InferenceDoor}), 429 when none is free; the route's admission takes it over, and it is given
   * back after the response otherwise.
   */
  public Principal admitInference(Context ctx) {
    return atDoor(ctx, requireAny(authenticate(ctx), Scope.INFERENCE_CHAT, Permission.INFERENCE));
  }

  /**
   * A route that runs a model on the extended surface only (completions, embeddings): an API key
   * with {@code inference} (or admin), let in as {@link #admitInference} lets in.
   */
  public Principal admitInferenceKey(Context ctx) {
    Principal principal = authenticate(ctx);
    requirePermission(principal, Permission.INFERENCE);
    return atDoor(ctx, principal);
  }

  private Principal atDoor(Context ctx, Principal principal) {
    if (principal.organization() == null) {
      return principal;
    }
    RequestScoped.closeAfterResponse(
        ctx,
        door.enter(
            principal,
            credentialWindowKey(principal),
            credentialLimit(principal),
            decision -> report(ctx, decision, false)));
    return principal;
  }

  /**
   * A context access token with the scope, or an API key with any of the permissions (admin grants
   * all). Used where both surfaces meet, such as model listing.
   */
  public Principal anyOf(Context ctx, Scope scope, Permission... permissions) {
    return limited(ctx, requireAny(authenticate(ctx), scope, permissions));
  }

  private static Principal requireAny(Principal principal, Scope scope, Permission... permissions) {
    boolean allowed = principal.hasScope(scope);
    for (Permission permission : permissions) {
      allowed |= principal.hasPermission(permission);
    }
    if (!allowed) {
      StringBuilder needed = new StringBuilder(
              "This route needs a context access token with the scope ")
          .append(scope.wireName())
          .append(" or an API key with the ");
      for (int i = 0; i < permissions.length; i++) {
        needed.append(i == 0 ? "" : " or ").append(permissions[i].wireName());
      }
      throw ApiException.forbidden(
          principal.kind() == Principal.Kind.CONTEXT_TOKEN
              ? "insufficient_scope"
              : "insufficient_permissions",
          needed.append(" permission").toString());
    }
    return principal;
  }

  /**
   * Inference over a WebSocket: the secret comes in a message rather than a header. The same
   * rules as {@link #inference(Context)}, and each inference counts against the credential's
   * requests per minute ({@link #countRequest}).
   */
  public Principal inferenceSecret(String secret) {
    if (secret == null || secret.isBlank()) {
      throw ApiException.unauthorized(
          "missing_api_key",
          "Authentication required: send {\"type\": \"auth\", " + "\"api_key\": \"<key>\"}");
    }
    return requireAny(
        credentials.authenticate(secret.strip()), Scope.INFERENCE_CHAT, Permission.INFERENCE);
  }

  /** Counts one request of a WebSocket caller against its per-minute budget; 429 when spent. */
  public void countRequest(Principal principal) {
    enforce(credentialWindow(principal), "credential");
  }

  /** Product routes under /api: a signed-in session, or an API key of the organization. */
  public Principal signedIn(Context ctx) {
    Principal principal = authenticate(ctx);
    if (principal.kind() != Principal.Kind.SESSION && principal.kind() != Principal.Kind.API_KEY) {
      throw ApiException.forbidden(
          "insufficient_permissions",
          "This route needs a signed-in session or an API key of the organization");
    }
    return limited(ctx, principal);
  }

  /**
   * Organization-wide product routes that automation may call too (reflection): a signed-in
   * session, an API key of the organization, or a context access token with the scope that is not
   * bound to agents, since these routes span every agent's memory.
   */
  public Principal organizationWide(Context ctx, Scope scope) {
    Principal principal = authenticate(ctx);
    switch (principal.kind()) {
      case SESSION, API_KEY -> {}
      case CONTEXT_TOKEN -> {
        if (!principal.hasScope(scope)) {
          throw ApiException.forbidden(
              "insufficient_scope",
              "This route needs a context access token with the " + "scope " + scope.wireName());
        }
        if (principal.agents() != null) {
          throw ApiException.forbidden(
              "agent_bound_token",
              "This route spans every agent of the organization; a "
                  + "token bound to agents cannot use it");
        }
      }
      default ->
        throw ApiException.forbidden(
            "insufficient_permissions",
            "This route needs a signed-in session, an "
                + "API key of the organization, or a context access token with the scope "
                + scope.wireName());
    }
    return limited(ctx, principal);
  }

  /** Operator read-outs such as /metrics: an account key, or anyone when API_KEY_REQUIRED=false. */
  public Principal operatorOrOpen(Context ctx) {
    if (!apiKeyRequired && ctx.header("Authorization") == null) {
      return Principal.ANONYMOUS;
    }
    return account(ctx);
  }

  private Principal authenticate(Context ctx) {
    Principal principal = resolve(ctx);
    Caller.set(ctx, new Caller(principal.credentialId(), principal.orgId()));
    if (principal.organization() != null) {
      enterOrganization(ctx, principal);
    } else {
      requireOwnDomain(principal, ctx.req().getServerName());
    }
    if (principal.kind() == Principal.Kind.SESSION
        && !SAFE_METHODS.contains(ctx.method().name())) {
      requireCsrf(ctx, principal);
    }
    return principal;
  }

  /**
   * The organization's network boundary, for every request of its credentials: a custom domain
   * serves its own organization only, the client's address must be in its allowlist (or an
   * accepted peering), the connection counts against its open connections, and the connection's
   * timeouts become the organization's.
   */
  private void enterOrganization(Context ctx, Principal principal) {
    MDC.put(OrganizationLogLevels.ORGANIZATION, principal.orgId());
    EffectiveConfig config = configs.effective(principal.organization());
    requireNetworkBoundary(
        config,
        principal,
        ctx.req().getRemoteAddr(),
        () -> Collections.list(ctx.req().getHeaders("X-Forwarded-For")),
        ctx.req().getServerName());
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

  /**
   * The checks of the organization's network settings, before any work is done (HTTP requests
   * and WebSocket upgrades alike): a custom domain refuses another organization's credential
   * (401), and an address outside the allowlist and the organization's accepted peerings is 403.
   *
   * @param peer the socket's remote address; {@code forwardedFor} is believed from trusted
   *     proxies only
   */
  public void requireNetworkBoundary(
      EffectiveConfig config,
      Principal principal,
      String peer,
      java.util.function.Supplier<List<String>> forwardedFor,
      String host) {
    requireOwnDomain(principal, host);
    byte[] client = clientAddress.of(peer, forwardedFor);
    if (!config.allows(client) && !network.peered(principal.orgId(), client)) {
      throw ApiException.forbidden(
          "ip_not_allowed",
          "This organization accepts requests only from its allowed IP ranges "
              + "(network.allowed_ips, POST /allowlist); " + ClientAddress.text(client)
              + " is not in them");
    }
  }

  /** On a custom domain, only that domain's organization's credentials are accepted. */
  private void requireOwnDomain(Principal principal, String host) {
    if (host == null) {
      return;
    }
    network.organizationOf(host.toLowerCase(Locale.ROOT)).ifPresent(owner -> {
      if (!owner.equals(principal.orgId())) {
        throw ApiException.unauthorized(
            "invalid_api_key",
            "This credential does not belong to the organization this domain serves");
      }
    });
  }

  private Principal resolve(Context ctx) {
    String authorization = ctx.header("Authorization");
    if (authorization != null) {
      String[] parts = authorization.trim().split("\\s+", 2);
      if (parts.length != 2 || !parts[0].equalsIgnoreCase("Bearer") || parts[1].isBlank()) {
        throw ApiException.unauthorized(
            "invalid_api_key", "The Authorization header must be 'Bearer <key>'");
      }
      return credentials.authenticate(parts[1].trim());
    }
    String session = ctx.cookie(SESSION_COOKIE);
    if (session != null && acceptsSessions(ctx.path())) {
      return sessions.authenticate(session);
    }
    throw ApiException.unauthorized(
        "missing_api_key",
        "Authentication required: send 'Authorization: Bearer <key>'"
            + (RouteFamily.of(ctx.path()) == RouteFamily.PRODUCT ? " or sign in" : ""));
  }

  /**
   * Where a session cookie counts: the product routes, and the routes the console drives for a
   * signed-in person (the organization's settings, memory, fine-tuning jobs, and the file API of
   * its instances). The gateway's OpenAI routes never read it: a browser session is not an
   * inference credential.
   */
  private static boolean acceptsSessions(String path) {
    return RouteFamily.of(path) == RouteFamily.PRODUCT
        || path.startsWith("/v1/nano/")
        || path.startsWith("/v1/organizations/")
        || path.equals("/v1/memory")
        || path.startsWith("/v1/memory/")
        || path.startsWith("/v1/fine_tuning/")
        || path.startsWith("/v1/fine-tuning/");
  }

  private static void requireCsrf(Context ctx, Principal principal) {
    String token = ctx.header(CSRF_HEADER);
    if (token == null || !SecretFormat.sameHash(SecretFormat.hash(token), principal.csrfHash())) {
      throw ApiException.forbidden(
          "csrf_failed", "Missing or invalid " + CSRF_HEADER + " header for this session");
    }
  }

  /**
   * Applies the rate limit that covers this caller on this route family: per organization by
   * plan on /api, per credential on /v1. The operator is not limited.
   */
  private Principal limited(Context ctx, Principal principal) {
    if (principal.organization() == null) {
      return principal;
    }
    boolean product = RouteFamily.of(ctx.path()) == RouteFamily.PRODUCT;
    RateLimitDecision decision;
    if (product) {
      Organization org = principal.organization();
      decision =
          rateLimiter.acquire("org:" + org.id(), org.apiRequestsPerMinute().value());
    } else {
      decision = credentialWindow(principal);
    }
    report(ctx, decision, product);
    return principal;
  }

  /** The window's numbers in the X-RateLimit headers; 429 when it refused the request. */
  private void report(Context ctx, RateLimitDecision decision, boolean product) {
    ctx.header("X-RateLimit-Limit", String.valueOf(decision.limit()));
    ctx.header("X-RateLimit-Remaining", String.valueOf(decision.remaining()));
    ctx.header("X-RateLimit-Reset", String.valueOf(decision.resetEpochSeconds()));
    if (!product) {
      // OpenAI's names for the same window, which its clients and dashboards read.
      ctx.header("x-ratelimit-limit-requests", String.valueOf(decision.limit()));
      ctx.header("x-ratelimit-remaining-requests", String.valueOf(decision.remaining()));
      ctx.header("x-ratelimit-reset-requests", decision.retryAfterSeconds() + "s");
    }
    enforce(decision, product ? "organization" : "credential");
  }

  /**
   * One request in the credential's window: its own rate_limit, else RATE_LIMIT_REQUESTS as in
   * force for its organization (the organization's variable, the operator's environment or a
   * runtime override).
   */
  private RateLimitDecision credentialWindow(Principal principal) {
    return rateLimiter.acquire(credentialWindowKey(principal), credentialLimit(principal));
  }

  private static String credentialWindowKey(Principal principal) {
    return RateLimits.credentialWindow(principal.orgId(), principal.credentialId());
  }

  private long credentialLimit(Principal principal) {
    return principal.rateLimit() != null
        ? principal.rateLimit()
        : principal.organization() == null
            ? defaultKeyRateLimit
            : organizationRateLimit(principal.organization());
  }

  private long organizationRateLimit(Organization org) {
    return configs
        .effective(org)
        .variable("RATE_LIMIT_REQUESTS")
        .map(Long::parseLong)
        .orElse((long) defaultKeyRateLimit);
  }

  /** One credential's requests-per-minute window as it stands, without counting a request. */
  public record Headroom(Credential credential, long limitPerMinute, long usedThisMinute) {}

  /** The windows of the organization's live API keys and context access tokens. */
  public List<Headroom> headroom(Organization org) {
    long shared = organizationRateLimit(org);
    List<Headroom> found = new ArrayList<>();
    for (CredentialKind kind : List.of(CredentialKind.API_KEY, CredentialKind.CONTEXT_TOKEN)) {
      for (Credential credential : credentials.list(kind, org.id())) {
        if (!credential.isRevoked()) {
          found.add(new Headroom(
              credential,
              credential.rateLimit() != null ? credential.rateLimit() : shared,
              rateLimiter.used(RateLimits.credentialWindow(org.id(), credential.id()))));
        }
      }
    }
    return found;
  }

  private void enforce(RateLimitDecision decision, String limitName) {
    if (!decision.allowed()) {
      metrics.rateLimitRejected(limitName);
      throw ApiException.rateLimited(
          "Rate limit of " + decision.limit() + " requests per minute exceeded for this "
              + limitName + "; retry after " + decision.retryAfterSeconds() + " seconds",
          decision.retryAfterSeconds());
    }
  }

  /**
   * Refuses sign-in from an address that failed too often this minute. Only failures count
   * ({@link #recordFailedSignIn}), so a busy office behind one address can still sign in.
   */
  public void checkSignInAllowed(Context ctx, long failuresPerMinute) {
    long failures = rateLimiter.used(signInKey(ctx));
    if (failures >= failuresPerMinute) {
      metrics.rateLimitRejected("sign_in");
      RateLimitDecision window = rateLimiter.acquire(signInKey(ctx), failuresPerMinute);
      throw ApiException.rateLimited(
          "Too many failed sign-in attempts; retry after " + window.retryAfterSeconds()
              + " seconds",
          window.retryAfterSeconds());
    }
  }

  public void recordFailedSignIn(Context ctx, long failuresPerMinute) {
    rateLimiter.acquire(signInKey(ctx), failuresPerMinute);
  }

  /**
   * Failures are counted per client address, read through ENGRAM_TRUSTED_PROXIES: behind a load
   * balancer the socket's peer is the balancer, whose address every client would share.
   */
  private String signInKey(Context ctx) {
    return "sign-in:"
        + ClientAddress.text(clientAddress.of(
            ctx.req().getRemoteAddr(),
            () -> Collections.list(ctx.req().getHeaders("X-Forwarded-For"))));
  }

  static ApiException organizationNotFound() {
    return ApiException.notFound("Organization not found");
  }
}
