package io.engram.platform.http;

import io.engram.platform.Ids;
import io.engram.platform.Serving;
import io.engram.platform.config.EngramConfig;
import io.engram.platform.logging.OrganizationLogLevels;
import io.engram.platform.metrics.HttpMetrics;
import io.engram.platform.tracing.Tracing;
import io.engram.platform.tracing.TracingFilter;
import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.MethodNotAllowedResponse;
import io.javalin.http.NotFoundResponse;
import io.javalin.router.Endpoint;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.regex.Pattern;
import net.logstash.logback.argument.StructuredArguments;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The Javalin server with what every route shares: request ids, error shapes, CORS, metrics and
 * the access log. Domain routes come in as {@link RouteModule}s.
 */
public final class HttpServer {
  private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);
  private static final Logger ACCESS = LoggerFactory.getLogger("engram.access");
  private static final Pattern CONTROL_IN_PATH =
      Pattern.compile("%(?:[01][0-9a-fA-F]|7[fF])|[\\x00-\\x1f\\x7f]");
  private static final Pattern CLIENT_REQUEST_ID = Pattern.compile("^[A-Za-z0-9._:-]{1,128}$");
  /** The response header Anthropic's SDKs read a request's id from. */
  static final String ANTHROPIC_REQUEST_ID = "request-id";

  private static final String STARTED_AT = "engram.startedAt";
  private static final String REQUEST_ID = "engram.requestId";

  private final Javalin javalin;
  private volatile ServerConnector tlsConnector;
  private final List<Routes.Route> routes;

  /**
   * @param tracing the node's traces: every request's span starts in the first filter
   * @param secure the second listener, on {@code API_TLS_PORT} (empty: plain HTTP only); it gets
   *     the server's HTTP settings to build on
   */
  public HttpServer(
      EngramConfig config,
      HttpMetrics metrics,
      Tracing tracing,
      List<RouteModule> modules,
      Optional<BiFunction<Server, HttpConfiguration, ServerConnector>> secure) {
    Routes[] table = new Routes[1];
    this.javalin = Javalin.create(javalinConfig -> {
      configure(javalinConfig, config);
      secure.ifPresent(listener -> javalinConfig.jetty.addConnector((server, http) -> {
        ServerConnector connector = listener.apply(server, http);
        tlsConnector = connector;
        return connector;
      }));
      javalinConfig.routes.before(HttpServer::beginRequest);
      javalinConfig.routes.after(ctx -> {
        RequestScoped.close(ctx);
        RefusedBody.afterRoute(ctx, config.server().maxBodyBytes());
        ConnectionOwners.afterResponse(ctx);
        endRequest(ctx, metrics);
      });
      javalinConfig.routes.exception(ApiException.class, (e, ctx) -> ErrorResponses.write(ctx, e));
      javalinConfig.routes.exception(
          HttpResponseException.class, (e, ctx) -> ErrorResponses.write(ctx, translate(e, ctx)));
      javalinConfig.routes.exception(Exception.class, (e, ctx) -> {
        if (ServerFaults.isServerCondition(e)) {
          // A full disk or an away database fails every request alike: one line every few
          // seconds says so (the condition's own log says when it began and ended).
          if (ServerFaults.worthLogging()) {
            LOG.warn("{} {}: {}", ctx.method().name(), ctx.path(), e.toString());
          }
        } else {
          LOG.error("unhandled exception on {} {}", ctx.method().name(), ctx.path(), e);
        }
        ErrorResponses.write(ctx, ServerFaults.answer(e));
      });
      table[0] = new Routes(javalinConfig.routes);
      modules.forEach(module -> module.register(table[0]));
      List<jakarta.servlet.Filter> filters = new java.util.ArrayList<>();
      // First: the request's span covers all the rest, to the response's last byte.
      filters.add(new TracingFilter(tracing));
      // Next: every stream below is the one the bandwidth limit counts.
      filters.add(new Bandwidth());
      filters.addAll(table[0].filters());
      // After the modules' own (a custom domain's organization decides its requests first).
      filters.add(new Cors(config.server().corsOrigins(), exposed(table[0].exposedHeaders())));
      javalinConfig.jetty.modifyServletContextHandler(
          context -> filters.forEach(filter -> context.addFilter(
              new org.eclipse.jetty.ee10.servlet.FilterHolder(filter),
              "/*",
              java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST))));
    });
    this.routes = table[0].all();
  }

  private static void configure(JavalinConfig javalinConfig, EngramConfig config) {
    javalinConfig.concurrency.useVirtualThreads = true;
    javalinConfig.startup.showJavalinBanner = false;
    javalinConfig.startup.showOldJavalinVersionWarning = false;
    javalinConfig.jetty.addConnector((server, http) -> EngramConnector.create(
        server, http, config.server().host(), config.server().port()));
    javalinConfig.http.prefer405over404 = true;
    javalinConfig.http.maxRequestSize = config.server().maxBodyBytes();
    javalinConfig.jetty.modifyServer(server -> {
      server.setStopTimeout(config.server().shutdownGraceSeconds() * 1000L);
      server.setErrorHandler(new ContainerErrors());
    });
  }

  /**
   * The response headers browsers may let scripts read: this server's own, and those the route
   * modules declared they set.
   */
  private static List<String> exposed(Set<String> moduleHeaders) {
    Set<String> exposed = new LinkedHashSet<>(
        List.of("X-Request-Id", ANTHROPIC_REQUEST_ID, "Retry-After", ErrorResponses.SHOULD_RETRY));
    exposed.addAll(moduleHeaders);
    return List.copyOf(exposed);
  }

  private static void beginRequest(Context ctx) {
    Serving.begin();
    ctx.attribute(STARTED_AT, System.nanoTime());
    String incoming = ctx.header("X-Request-Id");
    String requestId = incoming != null && CLIENT_REQUEST_ID.matcher(incoming).matches()
        ? incoming
        : Ids.newId("req", System.currentTimeMillis());
    MDC.put("request_id", requestId);
    ctx.attribute(REQUEST_ID, requestId);
    ctx.header("X-Request-Id", requestId);
    if (RouteFamily.of(ctx.path()) == RouteFamily.ANTHROPIC) {
      ctx.header(ANTHROPIC_REQUEST_ID, requestId); // where Anthropic's SDKs read it (request_id)
    }
    refuseLongUri(ctx);
    refuseControlCharacters(ctx);
    Cors.refuse(ctx);
  }

  private static void refuseLongUri(Context ctx) {
    String query = ctx.req().getQueryString();
    long length = ctx.req().getRequestURI().length() + (query == null ? 0 : query.length() + 1);
    if (length > EngramConnector.MAX_URI_BYTES) {
      throw ApiException.of(
          414,
          ErrorType.INVALID_REQUEST_ERROR,
          "http_414",
          "The URI is " + length + " bytes long; at most " + EngramConnector.MAX_URI_BYTES
              + " are accepted",
          null);
    }
  }

  /**
   * A NUL character is never meaningful in an id, a filter or a cursor, and PostgreSQL refuses it
   * in text ("invalid byte sequence"), which would surface as a 500. Refused here, once, for every
   * route; JSON bodies get the same rule in {@link JsonBody}. The path refuses every control
   * character: no id or route segment has one.
   */
  private static void refuseControlCharacters(Context ctx) {
    if (CONTROL_IN_PATH.matcher(ctx.req().getRequestURI()).find()) {
      throw ApiException.badRequest(
          null, "The path must not contain control characters (such as %00 or %0A)");
    }
    String query = ctx.queryString();
    if (query != null && (query.indexOf('\0') >= 0 || query.contains("%00"))) {
      throw ApiException.badRequest(null, "The URL must not contain a NUL character (%00)");
    }
  }

  /** This request's id, as sent back in X-Request-Id; recorded with the changes it makes. */
  public static String requestId(Context ctx) {
    return ctx.attribute(REQUEST_ID);
  }

  private static void endRequest(Context ctx, HttpMetrics metrics) {
    Serving.end();
    Long startedAt = ctx.attribute(STARTED_AT);
    long duration = startedAt == null ? 0 : System.nanoTime() - startedAt;
    String route = routeTemplate(ctx);
    int status = ctx.status().getCode();
    metrics.recordRequest(ctx.method().name(), route, status, duration);
    Caller caller = Caller.of(ctx);
    TracingFilter.routed(ctx.method().name(), route, requestId(ctx), caller.orgId());
    if (caller.orgId() != null) {
      metrics.traffic().record(caller.orgId(), status);
    }
    ACCESS.info(
        "{} {} {}",
        ctx.method().name(),
        ctx.path(),
        status,
        StructuredArguments.kv("route", route),
        StructuredArguments.kv("status", status),
        StructuredArguments.kv("duration_ms", duration / 1_000_000.0),
        StructuredArguments.kv("credential_id", caller.credentialId()),
        StructuredArguments.kv("org_id", caller.orgId()));
    MDC.remove("request_id");
    MDC.remove(OrganizationLogLevels.ORGANIZATION);
  }

  /** The matched route's template (e.g. /v1/organizations/{org_id}); "unmatched" keeps metrics bounded. */
  private static String routeTemplate(Context ctx) {
    try {
      Endpoint endpoint = ctx.endpoints().matchedHttpEndpoint();
      return endpoint == null ? TracingFilter.UNMATCHED : endpoint.path;
    } catch (RuntimeException e) {
      return TracingFilter.UNMATCHED;
    }
  }

  /** Javalin's own responses (no route, wrong method, body too large) in the family's error shape. */
  private static ApiException translate(HttpResponseException e, Context ctx) {
    String route = ctx.method().name() + " " + ctx.path();
    if (e instanceof MethodNotAllowedResponse) {
      return ApiException.methodNotAllowed(
          "Method " + ctx.method().name() + " is not allowed on " + ctx.path());
    }
    if (e instanceof NotFoundResponse) {
      return ApiException.notFound("route_not_found", null, "No route " + route);
    }
    return switch (e.getStatus()) {
      case 413 -> ApiException.tooLarge("The request body is too large");
      case 400 -> ApiException.badRequest(null, e.getMessage());
      default ->
        e.getStatus() >= 500
            ? ApiException.internal()
            : ApiException.of(
                e.getStatus(),
                ErrorType.INVALID_REQUEST_ERROR,
                "http_" + e.getStatus(),
                e.getMessage(),
                null);
    };
  }

  public HttpServer start() {
    javalin.start();
    return this;
  }

  public int port() {
    return javalin.port();
  }

  /** The TLS listener's port (its bound one when API_TLS_PORT=0), or -1 without one. */
  public int tlsPort() {
    return tlsConnector == null ? -1 : tlsConnector.getLocalPort();
  }

  public List<Routes.Route> routes() {
    return routes;
  }

  /** Stops accepting connections and lets in-flight requests finish (up to the grace period). */
  public void stop() {
    javalin.stop();
  }
}
