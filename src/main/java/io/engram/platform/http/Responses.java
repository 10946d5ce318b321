package io.engram.platform.http;

import io.engram.platform.json.Json;
import io.javalin.http.Context;

/** JSON responses written with the service's one ObjectMapper. */
public final class Responses {

  private Responses() {}

  public static void json(Context ctx, Object body) {
    ctx.contentType("application/json").result(Json.write(body));
  }

  public static void json(Context ctx, int status, Object body) {
    ctx.status(status);
    json(ctx, body);
  }
}
