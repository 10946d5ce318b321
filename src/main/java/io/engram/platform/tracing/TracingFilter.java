package io.engram.platform.tracing;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.propagation.TextMapGetter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;

/**
 * One server span per HTTP request, from the first filter to the last byte of the response (a
 * stream's too): a child of the client's {@code traceparent} when it sent one, named for its route
 * once the route is known ({@link #routed}), with the HTTP semantic conventions' attributes.
 */
public final class TracingFilter implements Filter {
  public static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
  public static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("engram.request.id");
  public static final AttributeKey<String> ORGANIZATION =
      AttributeKey.stringKey("engram.organization.id");
  private static final String TRACE_PARENT = "traceparent";

  /** The route template of a request no route took (HttpServer's, bounding its metrics). */
  public static final String UNMATCHED = "unmatched";

  private static final AttributeKey<Long> STATUS =
      AttributeKey.longKey("http.response.status_code");

  private static final TextMapGetter<HttpServletRequest> HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(HttpServletRequest request) {
      return Collections.list(request.getHeaderNames());
    }

    @Override
    public String get(HttpServletRequest request, String name) {
      return request == null ? null : request.getHeader(name);
    }
  };

  private final Tracing tracing;

  public TracingFilter(Tracing tracing) {
    this.tracing = tracing;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    if (!tracing.exports() && request.getHeader(TRACE_PARENT) == null) {
      chain.doFilter(req, res); // nothing to record and no trace context to hand on
      return;
    }
    try (Traces.Served served = Traces.serve(
        tracing.tracer(),
        Traces.extract(request, HEADERS),
        request.getMethod(),
        SpanKind.SERVER,
        tracing.exports() ? attributes(request) : Attributes.empty())) {
      try {
        chain.doFilter(req, res);
      } catch (IOException | ServletException | RuntimeException e) {
        Traces.failed(served.span(), e.getClass().getName(), null);
        throw e;
      } finally {
        int status = ((HttpServletResponse) res).getStatus();
        served.span().setAttribute(STATUS, (long) status);
        if (status >= 500) {
          served.span().setStatus(StatusCode.ERROR);
        }
      }
    }
  }

  /**
   * Names the request's span for its route ({@code POST /v1/chat/completions}), with the request's
   * id (the X-Request-Id the client got) and its organization (null: none).
   */
  public static void routed(String method, String route, String requestId, String orgId) {
    Span span = Traces.request();
    if (!span.isRecording()) {
      return;
    }
    if (!route.equals(UNMATCHED)) { // a request no route took keeps its method as its name
      span.updateName(method + " " + route);
      span.setAttribute(ROUTE, route);
    }
    span.setAttribute(REQUEST_ID, requestId);
    if (orgId != null) {
      span.setAttribute(ORGANIZATION, orgId);
    }
  }

  private static Attributes attributes(HttpServletRequest request) {
    AttributesBuilder attributes = Attributes.builder()
        .put("http.request.method", request.getMethod())
        .put("url.path", request.getRequestURI())
        .put("url.scheme", request.getScheme())
        .put("network.protocol.version", request.getProtocol().replace("HTTP/", ""))
        .put("client.address", request.getRemoteAddr());
    String agent = request.getHeader("User-Agent");
    if (agent != null) {
      attributes.put("user_agent.original", agent);
    }
    return attributes.build();
  }
}
