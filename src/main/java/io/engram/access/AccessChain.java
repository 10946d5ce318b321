package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.platform.http.Caller;
import io.engram.platform.http.Gate;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import io.javalin.security.RouteRole;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.MDC;

/**
 * What every request passes before its route runs, as one chain of small steps in one place (the
 * order is the contract; OkHttp's interceptor chain is the model):
 *
 * <ol>
 *   <li>authentication: who calls (401);
 *   <li>the organization's network boundary: its custom domain, allowlist and peerings (401, 403);
 *   <li>its connection cap and timeouts (429);
 *   <li>CSRF for cookie sessions (403);
 *   <li>the route's declared {@link Requirement}: 404 for another organization's things, then 403;
 *   <li>counting: the rate window, or the window and an inference slot together (429).
 * </ol>
 *
 * <p>It is the routes' {@link Gate}: every route declares its requirement (a route cannot be added
 * without one), and the chain runs inside the route's handler before the route's own code.
 */
public final class AccessChain implements Gate {
  static final String PRINCIPAL = "engram.principal";
  /** How a route finds an organization by id: {@link Access#organization}. */
  static final String ORGANIZATIONS = "engram.organizations";

  /** One step: throws the request's refusal, or lets it through to the next. */
  @FunctionalInterface
  interface Step {
    void apply(Context ctx, Principal principal, Requirement requirement);
  }

  private final Authentication authentication;
  private final boolean apiKeyRequired;
  private final List<Step> steps;
  private final Bandwidths bandwidths;

  AccessChain(
      Authentication authentication,
      boolean apiKeyRequired,
      OrganizationConfigs configs,
      NetworkBoundaryCheck boundary,
      ConnectionCap connections,
      CsrfCheck csrf,
      RequestWindows windows,
      InferenceSlot slot,
      Bandwidths bandwidths) {
    this.authentication = authentication;
    this.bandwidths = bandwidths;
    this.apiKeyRequired = apiKeyRequired;
    this.steps = List.of(
        (ctx, principal, requirement) -> {
          if (principal.organization() == null) {
            boundary.requireOwnDomain(principal, ctx.req().getServerName());
            return;
          }
          EffectiveConfig config = configs.effective(principal.organization());
          boundary.require(
              config,
              principal,
              ctx.req().getRemoteAddr(),
              () -> Collections.list(ctx.req().getHeaders("X-Forwarded-For")),
              ctx.req().getServerName());
          connections.claim(ctx, principal, config);
          // From here the request's body and answer share the organization's bandwidth.
          io.engram.platform.http.Bandwidth.Throttle throttle =
              bandwidths.of(principal.organization());
          if (throttle != null) {
            io.engram.platform.http.Bandwidth.limit(ctx, throttle);
          }
        },
        (ctx, principal, requirement) -> csrf.check(ctx, principal),
        (ctx, principal, requirement) -> requirement.check(ctx, principal),
        (ctx, principal, requirement) -> {
          switch (requirement.counting()) {
            case WINDOW -> windows.count(ctx, principal);
            case INFERENCE_SLOT -> slot.enter(ctx, principal);
          }
        });
  }

  /**
   * With API_KEY_REQUIRED=false and ENGRAM_OPEN_ORGANIZATION: who a request without a credential
   * is on the inference routes (that organization, with inference:chat only); null otherwise.
   * Every other step still runs: its network boundary, limits and rate window.
   */
  private volatile java.util.function.Supplier<Principal> openInference;

  void openInferenceAs(java.util.function.Supplier<Principal> principal) {
    this.openInference = principal;
  }

  private volatile Function<String, Optional<Organization>> organizations = id -> Optional.empty();

  void findOrganizationsWith(Function<String, Optional<Organization>> find) {
    this.organizations = find;
  }

  private static boolean carriesNoCredential(Context ctx) {
    return ctx.header("Authorization") == null
        && ctx.header(Authentication.API_KEY_HEADER) == null
        && ctx.cookie(Authentication.SESSION_COOKIE) == null;
  }

  @Override
  public void admit(Context ctx, RouteRole role) {
    if (!(role instanceof Requirement requirement)) {
      throw new IllegalStateException(ctx.path() + " declares " + role + ", not a Requirement");
    }
    if (requirement.open()) {
      return;
    }
    if (requirement.openWhenKeysNotRequired()
        && !apiKeyRequired
        && ctx.header("Authorization") == null) {
      ctx.attribute(PRINCIPAL, Principal.ANONYMOUS);
      return;
    }
    Principal principal =
        openInference != null && requirement.servesInference() && carriesNoCredential(ctx)
            ? openInference.get()
            : authentication.resolve(ctx);
    Caller.set(ctx, new Caller(principal.credentialId(), principal.orgId()));
    if (principal.organization() != null) {
      MDC.put(OrganizationLogLevels.ORGANIZATION, principal.orgId());
    }
    for (Step step : steps) {
      step.apply(ctx, principal, requirement);
    }
    ctx.attribute(PRINCIPAL, principal);
    ctx.attribute(ORGANIZATIONS, organizations);
  }
}
