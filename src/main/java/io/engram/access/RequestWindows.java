package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.RouteFamily;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.ratelimit.RateLimitDecision;
import io.engram.platform.ratelimit.RateLimiter;
import io.engram.platform.ratelimit.RateLimits;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.List;

/**
 * The requests-per-minute windows: per organization by plan on /api, per credential on /v1 (its
 * own rate_limit, else RATE_LIMIT_REQUESTS as in force for its organization). The operator is not
 * limited. The window's numbers go out in the X-RateLimit headers (and OpenAI's names for them).
 */
public final class RequestWindows {
  /** The headers {@link #count} sets, for the module that exposes them to browsers. */
  public static final List<String> HEADERS = List.of(
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "x-ratelimit-limit-requests",
      "x-ratelimit-remaining-requests",
      "x-ratelimit-reset-requests");

  private final RateLimiter windows;
  private final HttpMetrics metrics;
  private final OrganizationConfigs configs;
  private final CredentialService credentials;
  private final int defaultKeyRateLimit;

  RequestWindows(
      RateLimiter windows,
      HttpMetrics metrics,
      OrganizationConfigs configs,
      CredentialService credentials,
      int defaultKeyRateLimit) {
    this.windows = windows;
    this.metrics = metrics;
    this.configs = configs;
    this.credentials = credentials;
    this.defaultKeyRateLimit = defaultKeyRateLimit;
  }

  /** Counts the request in the window that covers the caller on this route family. */
  void count(Context ctx, Principal principal) {
    if (principal.organization() == null) {
      return;
    }
    boolean product = RouteFamily.of(ctx.path()) == RouteFamily.PRODUCT;
    Organization org = principal.organization();
    RateLimitDecision decision = product
        ? windows.acquire("org:" + org.id(), org.apiRequestsPerMinute().value())
        : windows.acquire(windowKey(principal), limit(principal));
    report(ctx, decision, product);
  }

  /** The window's numbers in the X-RateLimit headers; 429 when it refused the request. */
  void report(Context ctx, RateLimitDecision decision, boolean product) {
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

  /** Counts one request of a caller outside HTTP (a WebSocket message); 429 when spent. */
  void count(Principal principal) {
    enforce(windows.acquire(windowKey(principal), limit(principal)), "credential");
  }

  static String windowKey(Principal principal) {
    return RateLimits.credentialWindow(principal.orgId(), principal.credentialId());
  }

  long limit(Principal principal) {
    return principal.rateLimit() != null
        ? principal.rateLimit()
        : principal.organization() == null
            ? defaultKeyRateLimit
            : organizationLimit(principal.organization());
  }

  private long organizationLimit(Organization org) {
    return configs
        .effective(org)
        .variable("RATE_LIMIT_REQUESTS")
        .map(Long::parseLong)
        .orElse((long) defaultKeyRateLimit);
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

  /** One credential's requests-per-minute window as it stands, without counting a request. */
  public record Headroom(Credential credential, long limitPerMinute, long usedThisMinute) {}

  /** The windows of the organization's live API keys and context access tokens. */
  public List<Headroom> headroom(Organization org) {
    long shared = organizationLimit(org);
    List<Headroom> found = new ArrayList<>();
    for (CredentialKind kind : List.of(CredentialKind.API_KEY, CredentialKind.CONTEXT_TOKEN)) {
      for (Credential credential : credentials.list(kind, org.id())) {
        if (!credential.isRevoked()) {
          found.add(new Headroom(
              credential,
              credential.rateLimit() != null ? credential.rateLimit() : shared,
              windows.used(RateLimits.credentialWindow(org.id(), credential.id()))));
        }
      }
    }
    return found;
  }
}
