package io.engram.access;

import io.engram.platform.http.ApiException;
import io.javalin.http.Context;
import java.util.Set;

/**
 * A cookie session's unsafe requests carry the session's CSRF token in a header, which another
 * site's page cannot read and so cannot send.
 */
final class CsrfCheck {
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");

  void check(Context ctx, Principal principal) {
    if (principal.kind() != Principal.Kind.SESSION
        || SAFE_METHODS.contains(ctx.method().name())) {
      return;
    }
    String token = ctx.header(Authentication.CSRF_HEADER);
    if (token == null || !SecretFormat.sameHash(SecretFormat.hash(token), principal.csrfHash())) {
      throw ApiException.forbidden(
          "csrf_failed",
          "Missing or invalid " + Authentication.CSRF_HEADER + " header for this session");
    }
  }
}
