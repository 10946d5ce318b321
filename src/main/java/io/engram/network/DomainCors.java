package io.engram.network;

import io.engram.organizations.OrganizationStore;
import io.engram.platform.http.ApiException;
import io.engram.settings.OrganizationConfigs;
import io.javalin.http.Context;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * CORS on a custom domain follows its organization's {@code CORS_ORIGINS} (its variable, or the
 * layers under it down to the server's): a browser page of an allowed origin may call the domain;
 * for another origin the answer carries no {@code Access-Control-Allow-Origin}, and its preflight,
 * or a request that could change something, is a 403 {@code cors_origin_not_allowed}. The server's own names keep the server's
 * {@code CORS_ORIGINS}.
 *
 * <p>A servlet filter, because the server-wide CORS handlers run after every route module's and
 * would write their own answer over this one: the filter holds the response's CORS headers to the
 * organization's decision whatever later handlers set.
 */
final class DomainCors implements Filter {
  static final String VARIABLE = "CORS_ORIGINS";
  private static final String ALLOW_ORIGIN = "Access-Control-Allow-Origin";
  private static final String ALLOW_CREDENTIALS = "Access-Control-Allow-Credentials";
  private static final String REFUSED = "engram.cors.refused";
  private static final java.util.Set<String> READS = java.util.Set.of("GET", "HEAD", "OPTIONS");

  private final NetworkState state;
  private final OrganizationStore organizations;
  private final OrganizationConfigs configs;

  DomainCors(NetworkState state, OrganizationStore organizations, OrganizationConfigs configs) {
    this.state = state;
    this.organizations = organizations;
    this.configs = configs;
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    String origin = http.getHeader("Origin");
    Optional<String> orgId =
        origin == null ? Optional.empty() : organizationOf(http.getServerName());
    if (orgId.isEmpty()) {
      chain.doFilter(request, response);
      return;
    }
    // Decided here: the server's own CORS_ORIGINS (io.engram.platform.http.Cors) stays out of it.
    request.setAttribute("engram.cors.decided", true);
    List<String> allowed = allowed(orgId.get());
    boolean any = allowed.contains("*");
    boolean allows = any
        || allowed.contains(origin.toLowerCase(Locale.ROOT))
        || io.engram.platform.http.Cors.sameOrigin(http, origin);
    HttpServletResponse answer = (HttpServletResponse) response;
    answer.addHeader("Vary", "Origin");
    if (allows) {
      answer.setHeader(ALLOW_ORIGIN, any ? "*" : origin);
      if (!any) {
        answer.setHeader(ALLOW_CREDENTIALS, "true");
      }
      if (http.getMethod().equals("OPTIONS")
          && http.getHeader("Access-Control-Request-Method") != null) {
        io.engram.platform.http.Cors.answerPreflight(http, answer);
        return;
      }
    } else if ((http.getMethod().equals("OPTIONS")
            && http.getHeader("Access-Control-Request-Method") != null)
        || !READS.contains(http.getMethod())) {
      // A preflight, or a request that could change something (refused before it runs):
      // answered by refusePreflight, in the API's shape.
      request.setAttribute(REFUSED, origin);
    }
    chain.doFilter(request, new HeldCors(answer));
  }

  /** The Javalin side: a refused preflight becomes the API's error answer. */
  static void refusePreflight(Context ctx) {
    Object origin = ctx.req().getAttribute(REFUSED);
    if (origin != null) {
      throw ApiException.forbidden(
          "cors_origin_not_allowed",
          "The origin " + origin + " is not in this organization's CORS_ORIGINS");
    }
  }

  private Optional<String> organizationOf(String host) {
    try {
      return host == null ? Optional.empty() : state.organizationOf(host.toLowerCase(Locale.ROOT));
    } catch (ApiException notServing) {
      return Optional.empty(); // the route's own check answers 404
    }
  }

  private List<String> allowed(String orgId) {
    return Arrays.stream(configs
            .effective(organizations.get(orgId))
            .variable(VARIABLE)
            .orElse("")
            .split(","))
        .map(value -> value.strip().toLowerCase(Locale.ROOT))
        .filter(value -> !value.isEmpty())
        .toList();
  }

  /** A response whose CORS origin headers, once decided here, later handlers cannot change. */
  private static final class HeldCors extends HttpServletResponseWrapper {
    HeldCors(HttpServletResponse response) {
      super(response);
    }

    private static boolean held(String name) {
      return name.equalsIgnoreCase(ALLOW_ORIGIN) || name.equalsIgnoreCase(ALLOW_CREDENTIALS);
    }

    @Override
    public void setHeader(String name, String value) {
      if (!held(name)) {
        super.setHeader(name, value);
      }
    }

    @Override
    public void addHeader(String name, String value) {
      if (!held(name)) {
        super.addHeader(name, value);
      }
    }
  }

  @Override
  public void init(jakarta.servlet.FilterConfig config) {}

  @Override
  public void destroy() {}
}
