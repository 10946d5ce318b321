package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.organizations.User;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import io.engram.platform.http.Responses;
import io.engram.platform.http.RouteModule;
import io.engram.platform.http.Routes;
import io.javalin.http.Context;
import io.javalin.http.Cookie;
import io.javalin.http.SameSite;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Sign-in for the product UI routes under /api. The session secret goes in an HttpOnly,
 * SameSite=Lax cookie (Secure when ENGRAM_COOKIE_SECURE=true); the CSRF token is returned in the
 * body and in a readable cookie for the UI to echo in {@code X-CSRF-Token}.
 */
public final class SessionRoutes implements RouteModule {
  private final SessionService sessions;
  private final SignInThrottle signIns;
  private final long maxBodyBytes;
  private final boolean secureCookies;
  private final Duration ttl;

  public SessionRoutes(
      SessionService sessions,
      SignInThrottle signIns,
      long maxBodyBytes,
      boolean secureCookies,
      Duration ttl) {
    this.sessions = sessions;
    this.signIns = signIns;
    this.maxBodyBytes = maxBodyBytes;
    this.secureCookies = secureCookies;
    this.ttl = ttl;
  }

  @Override
  public void register(Routes routes) {
    routes
        .post("/api/auth/login", Requires.anyone(), this::login)
        .post("/api/auth/logout", Requires.signedIn(), this::logout)
        .post("/api/auth/switch", Requires.signedIn(), this::switchOrganization)
        .get("/api/auth/session", Requires.signedIn(), this::session);
  }

  private void login(Context ctx) {
    signIns.checkAllowed(ctx);
    JsonBody body =
        JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("email", "password", "organizationId"));
    String email = body.requiredString("email", 254).toLowerCase(Locale.ROOT);
    String password = body.requiredString("password", 1024);
    String orgId = body.optionalString("organizationId", 64).orElse(null);
    SessionService.SignedIn signedIn;
    try {
      signedIn = sessions.signIn(email, password, orgId);
    } catch (ApiException e) {
      signIns.recordFailure(ctx);
      throw e;
    } catch (SessionService.SeveralOrganizations several) {
      // The password was right in each: say which, so the person can choose.
      Map<String, Object> choose = new LinkedHashMap<>();
      choose.put("success", false);
      choose.put("error", "Invalid request");
      choose.put("message", several.getMessage());
      choose.put("field", "organizationId");
      choose.put(
          "organizations",
          several.choices().stream()
              .map(o -> Map.of("id", o.id(), "name", o.name()))
              .toList());
      Responses.json(ctx, 400, choose);
      return;
    }
    opened(ctx, signedIn);
  }

  /** Sets the new session's cookies and answers its view with the CSRF token. */
  private void opened(Context ctx, SessionService.SignedIn signedIn) {
    ctx.cookie(
        cookie(Authentication.SESSION_COOKIE, signedIn.secret(), (int) ttl.toSeconds(), true));
    ctx.cookie(
        cookie(Authentication.CSRF_COOKIE, signedIn.csrfToken(), (int) ttl.toSeconds(), false));
    Map<String, Object> response =
        sessionView(signedIn.user(), signedIn.organization(), signedIn.expiresAt());
    response.put("csrfToken", signedIn.csrfToken());
    Responses.json(ctx, response);
  }

  private void switchOrganization(Context ctx) {
    Principal principal = Access.caller(ctx);
    if (principal.kind() != Principal.Kind.SESSION) {
      throw ApiException.forbidden(
          "insufficient_permissions", "Only a signed-in session switches organizations");
    }
    JsonBody body = JsonBody.parse(ctx, maxBodyBytes).allowOnly(Set.of("organizationId"));
    opened(ctx, sessions.switchTo(principal, body.requiredString("organizationId", 64)));
  }

  private void logout(Context ctx) {
    Principal principal = Access.caller(ctx);
    if (principal.kind() == Principal.Kind.SESSION) {
      sessions.signOut(principal);
    }
    ctx.cookie(cookie(Authentication.SESSION_COOKIE, "", 0, true));
    ctx.cookie(cookie(Authentication.CSRF_COOKIE, "", 0, false));
    Responses.json(ctx, Map.of("success", true, "message", "Signed out"));
  }

  private void session(Context ctx) {
    Principal principal = Access.caller(ctx);
    Map<String, Object> view = sessionView(principal.user(), principal.organization(), null);
    if (principal.kind() == Principal.Kind.SESSION) {
      view.put(
          "organizations",
          sessions.memberships(principal).stream()
              .map(m -> Map.of(
                  "id", m.organization().id(),
                  "name", m.organization().name(),
                  "role", m.user().role().id()))
              .toList());
    }
    Responses.json(ctx, view);
  }

  private Cookie cookie(String name, String value, int maxAgeSeconds, boolean httpOnly) {
    return new Cookie(name, value, "/", maxAgeSeconds, secureCookies, httpOnly, null, SameSite.LAX);
  }

  private static Map<String, Object> sessionView(User user, Organization org, Instant expiresAt) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("success", true);
    if (user != null) {
      view.put(
          "user",
          Map.of(
              "id",
              user.id(),
              "email",
              user.email(),
              "name",
              user.name(),
              "role",
              user.role().id()));
    }
    view.put(
        "organization",
        Map.of(
            "id",
            org.id(),
            "name",
            org.name(),
            "plan",
            org.plan().id(),
            "tier",
            org.plan().tier().id()));
    if (expiresAt != null) {
      view.put("expiresAt", expiresAt.toString());
    }
    return view;
  }
}
