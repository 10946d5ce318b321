package io.engram.platform.http;

import io.engram.platform.tracing.Traces;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Handler;
import io.javalin.http.HandlerType;
import io.javalin.security.RouteRole;
import io.javalin.websocket.WsConfig;
import io.opentelemetry.api.trace.Span;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Where route modules register their routes. Besides handing them to Javalin it keeps the list,
 * which the OpenAPI test compares with {@code openapi.yaml} so the document cannot drift.
 */
public final class Routes {

  /** One registered route: method and path template as written in the OpenAPI document. */
  public record Route(String method, String path) {}

  private final RoutesConfig javalin;
  private final List<Route> registered = new ArrayList<>();
  private final Set<String> exposedHeaders = new LinkedHashSet<>();
  private final List<jakarta.servlet.Filter> filters = new ArrayList<>();
  private volatile Gate gate = Gate.CLOSED;

  public Routes(RoutesConfig javalin) {
    this.javalin = javalin;
  }

  public Routes get(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.GET, path, requirement, handler);
  }

  public Routes post(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.POST, path, requirement, handler);
  }

  public Routes patch(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.PATCH, path, requirement, handler);
  }

  public Routes put(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.PUT, path, requirement, handler);
  }

  public Routes delete(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.DELETE, path, requirement, handler);
  }

  public Routes head(String path, RouteRole requirement, Handler handler) {
    return add(HandlerType.HEAD, path, requirement, handler);
  }

  /**
   * A WebSocket endpoint. It is not an OpenAPI operation, so it is not in {@link #all()}; the
   * protocols are documented in docs/inference.md.
   */
  public Routes ws(String path, Consumer<WsConfig> handler) {
    javalin.ws(path, handler);
    return this;
  }

  /**
   * A servlet filter around every request, for what must hold whatever the handlers do (the CORS
   * answer of a custom domain).
   */
  public Routes filter(jakarta.servlet.Filter filter) {
    filters.add(filter);
    return this;
  }

  public List<jakarta.servlet.Filter> filters() {
    return List.copyOf(filters);
  }

  /** What runs after every request's route (clears what a {@link #before} handler set). */
  public Routes after(Handler handler) {
    javalin.after(handler);
    return this;
  }

  /** A check every request passes before its route (such as the custom domain's state). */
  public Routes before(Handler handler) {
    javalin.before(handler);
    return this;
  }

  /**
   * Every route declares what it requires of its caller (the access rules' {@code Requires}); the
   * {@link Gate} (the access chain) enforces it before the route's handler runs.
   */
  private Routes add(HandlerType method, String path, RouteRole requirement, Handler handler) {
    java.util.Objects.requireNonNull(
        requirement, () -> method + " " + path + " declares no requirement");
    javalin.addHttpHandler(
        method,
        path,
        ctx -> {
          admit(ctx, requirement);
          handler.handle(ctx);
        },
        requirement);
    // Javalin writes a parameter that may hold slashes as <name>; OpenAPI writes every one {name}.
    registered.add(new Route(method.name(), path.replaceAll("<([^>]+)>", "{$1}")));
    return this;
  }

  /** The access chain's verdict on the request, as the request's "access" span. */
  private void admit(io.javalin.http.Context ctx, RouteRole requirement) {
    Span access = Traces.span("access");
    try {
      gate.admit(ctx, requirement);
    } catch (ApiException refused) {
      Traces.failed(access, refused.code(), refused.getMessage());
      throw refused;
    } finally {
      access.end();
    }
  }

  /**
   * What every route's requirement passes before the route runs (the access chain). Read at each
   * request, so modules may register their routes before or after the access rules install it.
   */
  public Routes guardWith(Gate gate) {
    this.gate = gate;
    return this;
  }

  /** Response headers a module sets that browser scripts on other origins may read (CORS). */
  public Routes exposeHeaders(String... headers) {
    Collections.addAll(exposedHeaders, headers);
    return this;
  }

  public Set<String> exposedHeaders() {
    return Set.copyOf(exposedHeaders);
  }

  public List<Route> all() {
    return List.copyOf(registered);
  }
}
