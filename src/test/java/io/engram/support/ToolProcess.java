package io.engram.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A server the tests run beside Engram as a real process (a Redis of their own, HAProxy), found on
 * the machine: a failure in CI when absent, a skip elsewhere. Killed with the test JVM if a test
 * fails before closing it.
 */
public final class ToolProcess implements AutoCloseable {
  private final Process process;
  private final Path log;
  public final int port;

  private ToolProcess(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /** The program, from the variable {@code variable} (set by ./engram test) or the PATH. */
  public static String find(String variable, String program) {
    Optional<String> found = Optional.ofNullable(System.getenv(variable))
        .filter(path -> Files.isExecutable(Path.of(path)))
        .or(() -> onPath(program));
    if (found.isEmpty() && "true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(program + " is required in CI (./engram test provides it)");
    }
    Assumptions.assumeTrue(
        found.isPresent(), program + " not found; skipped outside CI. Run ./engram test.");
    return found.get();
  }

  private static Optional<String> onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(dir, program);
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate.toString());
      }
    }
    return Optional.empty();
  }

  /** Starts the command and waits until {@code port} accepts connections. */
  public static ToolProcess start(List<String> command, Map<String, String> env, int port) {
    try {
      Path log = Files.createTempFile("engram-tool", ".log");
      ProcessBuilder builder =
          new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      builder.environment().putAll(env);
      Process process = builder.start();
      Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
      ToolProcess tool = new ToolProcess(process, log, port);
      tool.awaitListening(Duration.ofSeconds(20));
      return tool;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void awaitListening(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("exited with " + process.exitValue() + ":\n" + log());
      }
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        ServerProcess.sleep(50);
      }
    }
    throw new IllegalStateException("not listening on " + port + " in " + timeout + ":\n" + log());
  }

  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** Stops it at once (SIGKILL) and waits for it to be gone. */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
