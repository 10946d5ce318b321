package io.engram.access;

import io.engram.platform.http.ApiException;
import io.engram.platform.http.RouteFamily;
import io.javalin.http.Context;
import java.util.regex.Pattern;

/**
 * The first step of every guarded request: who is calling, from the bearer credential or, on the
 * routes a signed-in person drives, the session cookie.
 */
public final class Authentication {
  public static final String SESSION_COOKIE = "engram_session";
  public static final String CSRF_COOKIE = "engram_csrf";
  public static final String CSRF_HEADER = "X-CSRF-Token";

  /** The header Anthropic's clients carry their key in. */
  static final String API_KEY_HEADER = "x-api-key";

  /** Between the scheme and the credential (compiled once: every request reads it). */
  private static final Pattern SPACES = Pattern.compile("\\s+");

  private final CredentialService credentials;
  private final SessionService sessions;

  Authentication(CredentialService credentials, SessionService sessions) {
    this.credentials = credentials;
    this.sessions = sessions;
  }

  Principal resolve(Context ctx) {
    String authorization = ctx.header("Authorization");
    if (authorization != null) {
      String[] parts = SPACES.split(authorization.trim(), 2);
      if (parts.length != 2 || !parts[0].equalsIgnoreCase("Bearer") || parts[1].isBlank()) {
        throw ApiException.unauthorized(
            "invalid_api_key", "The Authorization header must be 'Bearer <key>'");
      }
      return credentials.authenticate(parts[1].trim());
    }
    // Anthropic's clients send their key as x-api-key: an Engram credential works there too.
    String apiKey = ctx.header(API_KEY_HEADER);
    if (apiKey != null && !apiKey.isBlank()) {
      return credentials.authenticate(apiKey.trim());
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

  /** A secret sent in a message rather than a header (a WebSocket's first message). */
  Principal resolve(String secret) {
    if (secret == null || secret.isBlank()) {
      throw ApiException.unauthorized(
          "missing_api_key",
          "Authentication required: send {\"type\": \"auth\", \"api_key\": \"<key>\"}");
    }
    return credentials.authenticate(secret.strip());
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
}
