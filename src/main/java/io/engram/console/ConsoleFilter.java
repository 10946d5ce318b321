package io.engram.console;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Serves the web console: the sign-in page at {@code /}, one page shell for every path under
 * {@code /console/} (the script reads the path and draws that page from the API), and the
 * console's own scripts and styles. A filter rather than routes, because these are files, not
 * API operations: the OpenAPI document lists the API and nothing else.
 *
 * <p>Every answer carries a strict Content-Security-Policy (scripts and styles from this server
 * only, no inline script, no framing), so text that reaches a page (a memory's, a name) can only
 * ever be text.
 */
public final class ConsoleFilter implements Filter {
  static final String CONTENT_SECURITY_POLICY = String.join(
      "; ",
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'");

  /** A page of the console: letters, digits, '-', '_' and '~' in '/'-separated segments (no dots: no file names). */
  private static final Pattern PAGE = Pattern.compile("/console(/[A-Za-z0-9_~-]+)*/?");

  private final ConsoleFiles files;

  public ConsoleFilter(ClassLoader loader) {
    this.files = new ConsoleFiles(loader);
  }

  public long scriptBytesGzipped() {
    return files.scriptBytesGzipped();
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest http = (HttpServletRequest) request;
    String method = http.getMethod();
    Optional<ConsoleFiles.File> file = method.equals("GET") || method.equals("HEAD")
        ? fileFor(http.getRequestURI())
        : Optional.empty();
    if (file.isEmpty()) {
      chain.doFilter(request, response);
      return;
    }
    send(http, (HttpServletResponse) response, file.get());
  }

  private Optional<ConsoleFiles.File> fileFor(String path) {
    return files
        .get(path)
        .or(() -> PAGE.matcher(path).matches() ? files.get("/console/app") : Optional.empty());
  }

  private static void send(
      HttpServletRequest request, HttpServletResponse response, ConsoleFiles.File file)
      throws IOException {
    response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.setHeader("X-Content-Type-Options", "nosniff");
    response.setHeader("X-Frame-Options", "DENY");
    response.setHeader("Referrer-Policy", "same-origin");
    // Versioned files never change; the rest is revalidated on every load (a 304 when unchanged),
    // so an upgrade is seen at once.
    response.setHeader(
        "Cache-Control", file.immutable() ? "public, max-age=31536000, immutable" : "no-cache");
    response.setHeader("ETag", file.etag());
    response.setHeader("Vary", "Accept-Encoding");
    if (file.etag().equals(request.getHeader("If-None-Match"))) {
      response.setStatus(304);
      return;
    }
    response.setContentType(file.type());
    String accepted = request.getHeader("Accept-Encoding");
    boolean gzip = accepted != null && accepted.contains("gzip");
    byte[] body = gzip ? file.gzipped() : file.body();
    if (gzip) {
      response.setHeader("Content-Encoding", "gzip");
    }
    response.setContentLength(body.length);
    if (!request.getMethod().equals("HEAD")) {
      response.getOutputStream().write(body);
    }
  }
}
