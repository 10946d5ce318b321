package io.engram.platform.http;

import io.javalin.http.Context;

/**
 * Who made a request, as the access log and metrics record it: the credential's id and its
 * organization (both null when nobody authenticated). The access rules resolve it and leave it
 * on the request here, so the server logs it without knowing how credentials work.
 */
public record Caller(String credentialId, String orgId) {
  public static final Caller ANONYMOUS = new Caller(null, null);
  private static final String ATTRIBUTE = "engram.caller";

  public static void set(Context ctx, Caller caller) {
    ctx.attribute(ATTRIBUTE, caller);
  }

  public static Caller of(Context ctx) {
    Caller caller = ctx.attribute(ATTRIBUTE);
    return caller == null ? ANONYMOUS : caller;
  }
}
