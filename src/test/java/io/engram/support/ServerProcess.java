package io.engram.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Engram as a separate JVM, for what only a real process shows: start-up exits, kill -9, SIGTERM. */
public final class ServerProcess implements AutoCloseable {
  private final Process process;
  private final Path stdout;
  private final Path stderr;
  public final int port;

  private ServerProcess(Process process, Path stdout, Path stderr, int port) {
    this.process = process;
    this.stdout = stdout;
    this.stderr = stderr;
    this.port = port;
  }

  /** Starts {@code io.engram.Main} with the given arguments and environment (plus a free API_PORT). */
  public static ServerProcess start(Map<String, String> env, String... args) {
    int port = freePort();
    List<String> command = new ArrayList<>(mainCommand());
    command.addAll(Arrays.asList(args));
    try {
      Path out = Files.createTempFile("engram-out", ".log");
      Path err = Files.createTempFile("engram-err", ".log");
      ProcessBuilder builder = new ProcessBuilder(command)
          .redirectOutput(out.toFile())
          .redirectError(err.toFile())
          .redirectInput(ProcessBuilder.Redirect.PIPE);
      builder.environment().put("API_PORT", String.valueOf(port));
      builder.environment().put("API_HOST", "127.0.0.1");
      // A scheduled reflection run could merge a test's look-alike memories under it.
      builder.environment().put("ENGRAM_REFLECTION_SCHEDULER", "false");
      builder.environment().putAll(env);
      Process process = builder.start();
      // A test that fails before closing it (awaitHealthy throwing inside try-with-resources
      // leaves nothing to close) must not leave a server running after the test JVM.
      Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
      return new ServerProcess(process, out, err, port);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The command that runs {@code io.engram.Main} from the test class path, as the launcher runs the
   * built jar: this JVM's java, the stack's JVM flags and a small heap.
   */
  public static List<String> mainCommand() {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(
        Arrays.asList(System.getProperty("engram.jvm.flags", "").trim().split("\\s+")));
    // Small for tests; a benchmark gives its nodes more (-Dengram.node.heap=1g).
    command.add("-Xmx" + System.getProperty("engram.node.heap", "256m"));
    command.add("-cp");
    command.add(
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
    command.add("io.engram.Main");
    return command.stream().filter(s -> !s.isEmpty()).toList();
  }

  public static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public Http http() {
    return new Http("http://127.0.0.1:" + port);
  }

  /** Waits until /v1/health answers, or fails with the process output. */
  public ServerProcess awaitHealthy(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "server exited with " + process.exitValue() + ":\n" + stderr() + stdout());
      }
      try {
        if (http().get("/v1/health").send().status() == 200) {
          return this;
        }
      } catch (RuntimeException notYet) {
        // not listening yet
      }
      sleep(100);
    }
    process.destroyForcibly();
    throw new IllegalStateException(
        "server not healthy in " + timeout + ":\n" + stderr() + stdout());
  }

  public int awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("process did not exit in " + timeout);
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL: no shutdown hook runs, nothing is flushed by the JVM. */
  public void kill9() {
    process.destroyForcibly();
    awaitExit(Duration.ofSeconds(10));
  }

  /** SIGTERM: the graceful path. */
  public int terminate() {
    process.destroy();
    return awaitExit(Duration.ofSeconds(30));
  }

  public Process process() {
    return process;
  }

  public String stdout() {
    return read(stdout);
  }

  public String stderr() {
    return read(stderr);
  }

  private static String read(Path path) {
    try {
      return Files.readString(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Sleeps, turning an interruption into a failure of the test. */
  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}
