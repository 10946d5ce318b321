package io.engram.platform.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The server's {@code CORS_ORIGINS} for browsers. An allowed origin (or the page's own, which a
 * browser names on its POSTs) gets {@code Access-Control-Allow-*} and its preflight a 204. Another
 * origin gets no {@code Access-Control-Allow-*} header: its preflight is a 403
 * {@code cors_origin_not_allowed}, and so is any request that could change something
 * (POST, PUT, PATCH, DELETE), refused before it runs: a browser would not let the page read the
 * answer, but a server that ran the request anyway would have done what the page asked (a
 * "simple" cross-origin POST needs no preflight). A read (GET, HEAD) from another origin gets its
 * normal answer without the headers: the browser keeps it from the page, and refusing it would only
 * break non-browser clients that send {@code Origin}.
 *
 * <p>A custom domain's requests are decided by its organization's own list first (the network
 * module's filter marks them decided), so this filter leaves them alone.
 */
public final class Cors implements Filter {
  /** Set by a filter that already decided the request's CORS (a custom domain's organization). */
  static final String DECIDED = "engram.cors.decided";
  /** The origin of a request refused here, answered in the API's shape by {@link #refuse}. */
  static final String REFUSED = "engram.cors.refused.server";

  private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

  private final List<String> origins;
  private final String exposed;

  Cors(List<String> origins, List<String> exposedHeaders) {
    this.origins = origins.stream().map(o -> o.strip().toLowerCase(Locale.ROOT)).toList();
    this.exposed = String.join(", ", exposedHeaders);
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    HttpServletResponse answer = (HttpServletResponse) response;
    String origin = http.getHeader("Origin");
    if (origin == null || http.getAttribute(DECIDED) != null) {
      chain.doFilter(request, response);
      return;
    }
    boolean any = origins.contains("*");
    boolean allowed =
        any || origins.contains(origin.toLowerCase(Locale.ROOT)) || sameOrigin(http, origin);
    boolean preflight = http.getMethod().equals("OPTIONS")
        && http.getHeader("Access-Control-Request-Method") != null;
    answer.addHeader("Vary", "Origin");
    if (allowed) {
      answer.setHeader("Access-Control-Allow-Origin", any ? "*" : origin);
      if (!any) {
        answer.setHeader("Access-Control-Allow-Credentials", "true");
      }
      if (preflight) {
        answerPreflight(http, answer);
        return;
      }
      answer.setHeader("Access-Control-Expose-Headers", exposed);
      chain.doFilter(request, response);
      return;
    }
    if (preflight || !READS.contains(http.getMethod())) {
      request.setAttribute(REFUSED, origin);
    }
    chain.doFilter(request, response);
  }

  /** An allowed origin's preflight: 204, every method, the headers it asked for. */
  public static void answerPreflight(HttpServletRequest http, HttpServletResponse answer) {
    answer.setHeader(
        "Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    String asked = http.getHeader("Access-Control-Request-Headers");
    if (asked != null) {
      answer.setHeader("Access-Control-Allow-Headers", asked);
    }
    answer.setHeader("Access-Control-Max-Age", "600");
    answer.setStatus(204);
  }

  /**
   * A page calling the server it was served from: its Origin names the host the request went to
   * (the scheme is left aside: behind a proxy that ends TLS the server sees http).
   */
  public static boolean sameOrigin(HttpServletRequest http, String origin) {
    String host = http.getHeader("Host");
    int scheme = origin.indexOf("://");
    return host != null && scheme > 0 && origin.substring(scheme + 3).equalsIgnoreCase(host);
  }

  /** The refusal, in the route family's error shape, before any route runs. */
  static void refuse(io.javalin.http.Context ctx) {
    Object origin = ctx.req().getAttribute(REFUSED);
    if (origin != null) {
      throw ApiException.forbidden(
          "cors_origin_not_allowed",
          "The origin " + origin + " is not in this server's CORS_ORIGINS: a browser page of it"
              + " may not call this API");
    }
  }

  @Override
  public void init(jakarta.servlet.FilterConfig config) {}

  @Override
  public void destroy() {}
}
