package io.engram.platform;

/**
 * Whether the current thread is serving a request: set by the HTTP server around every route
 * (a route's work runs on the request's own thread), read by what counts the work a request waits
 * on, such as the database's statements ({@code store.Statements}).
 */
public final class Serving {
  private static final ThreadLocal<boolean[]> SERVING =
      ThreadLocal.withInitial(() -> new boolean[1]);

  private Serving() {}

  public static void begin() {
    SERVING.get()[0] = true;
  }

  public static void end() {
    SERVING.get()[0] = false;
  }

  public static boolean now() {
    return SERVING.get()[0];
  }
}
