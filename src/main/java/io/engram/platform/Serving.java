package io.engram.platform;

/**
 * Whether the current thread is serving a request: set by the HTTP server around every route
 * (a route's work runs on the request's own thread), read by what counts the work a request waits
 * on, such as the database's statements ({@code store.Statements}).
 */
public final class Serving {
  private static final ThreadLocal<Boolean> SERVING = new ThreadLocal<>();

  private Serving() {}

  public static void begin() {
    SERVING.set(Boolean.TRUE);
  }

  /** Ends it, leaving nothing behind on a thread that goes on to other work. */
  public static void end() {
    SERVING.remove();
  }

  public static boolean now() {
    return SERVING.get() != null;
  }
}
