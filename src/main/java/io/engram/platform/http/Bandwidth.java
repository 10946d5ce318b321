package io.engram.platform.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;

/**
 * Bandwidth limits on the bytes a request's body brings in and its answer takes out. Every request
 * passes through this filter; once the access rules know the caller they put its organization's
 * {@link Throttle} on the request ({@link #limit}), and from then each read and write waits for its
 * bytes (one throttle per organization: its connections and streams share it). A request without
 * a throttle (the operator, a plan without a bandwidth limit) is not slowed.
 */
public final class Bandwidth implements Filter {
  private static final String THROTTLE = "engram.bandwidth";

  /** What an organization's bytes wait for. */
  public interface Throttle {
    /** Returns once {@code bytes} may pass (at once, or after the wait the rate asks for). */
    void take(long bytes);
  }

  /** Limits the rest of this request (its body still to read, its answer) to {@code throttle}. */
  public static void limit(io.javalin.http.Context ctx, Throttle throttle) {
    ctx.req().setAttribute(THROTTLE, throttle);
  }

  private static void take(ServletRequest request, long bytes) {
    if (bytes > 0 && request.getAttribute(THROTTLE) instanceof Throttle throttle) {
      throttle.take(bytes);
    }
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest in = (HttpServletRequest) request;
    chain.doFilter(new Incoming(in), new Outgoing((HttpServletResponse) response, in));
  }

  private static final class Incoming extends HttpServletRequestWrapper {
    private ServletInputStream stream;

    Incoming(HttpServletRequest request) {
      super(request);
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
      if (stream == null) {
        ServletInputStream body = super.getInputStream();
        ServletRequest request = getRequest();
        stream = new ServletInputStream() {
          @Override
          public int read() throws IOException {
            int b = body.read();
            if (b >= 0) {
              take(request, 1);
            }
            return b;
          }

          @Override
          public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = body.read(buffer, offset, length);
            take(request, n);
            return n;
          }

          @Override
          public boolean isFinished() {
            return body.isFinished();
          }

          @Override
          public boolean isReady() {
            return body.isReady();
          }

          @Override
          public void setReadListener(ReadListener listener) {
            body.setReadListener(listener);
          }
        };
      }
      return stream;
    }
  }

  private static final class Outgoing extends HttpServletResponseWrapper {
    private final ServletRequest request;
    private ServletOutputStream stream;

    Outgoing(HttpServletResponse response, ServletRequest request) {
      super(response);
      this.request = request;
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      if (stream == null) {
        ServletOutputStream body = super.getOutputStream();
        stream = new ServletOutputStream() {
          @Override
          public void write(int b) throws IOException {
            take(request, 1);
            body.write(b);
          }

          @Override
          public void write(byte[] buffer, int offset, int length) throws IOException {
            take(request, length);
            body.write(buffer, offset, length);
          }

          @Override
          public void flush() throws IOException {
            body.flush();
          }

          @Override
          public void close() throws IOException {
            body.close();
          }

          @Override
          public boolean isReady() {
            return body.isReady();
          }

          @Override
          public void setWriteListener(WriteListener listener) {
            body.setWriteListener(listener);
          }
        };
      }
      return stream;
    }
  }

  @Override
  public void init(jakarta.servlet.FilterConfig config) {}

  @Override
  public void destroy() {}
}
