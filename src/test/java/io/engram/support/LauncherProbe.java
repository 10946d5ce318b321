package io.engram.support;

/**
 * Stands in for engram.jar when the launcher itself is under test: says how it was started (its
 * arguments, LOG_FORMAT as the launcher left it, whether the JVM has the Vector API module) and
 * writes one line of its own to stderr, which the launcher must pass through.
 */
public final class LauncherProbe {
  private LauncherProbe() {}

  public static void main(String[] args) {
    System.out.println("probe args=" + String.join(" ", args));
    System.out.println("probe LOG_FORMAT=" + System.getenv().getOrDefault("LOG_FORMAT", ""));
    System.out.println(
        "probe vector=" + ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent());
    System.err.println("probe: a line of its own on stderr");
  }
}
