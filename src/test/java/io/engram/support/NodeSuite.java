package io.engram.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * A suite of node:test files in {@code compat/} (real npm clients: openai, the Vercel AI SDK, the
 * MCP SDK), run against a server the Java test started. Node.js is required in CI; elsewhere its
 * absence skips the suite. The packages are installed with {@code npm ci} when absent.
 */
public final class NodeSuite {
  private static final Path DIRECTORY = Path.of("compat");
  private static final long MINUTES = 5;

  /** What a run printed and how it ended. */
  public record Result(int exitCode, String output) {
    /**
     * Asserts the run passed exactly {@code tests} tests: a suite that ran nothing, one whose test
     * was skipped, and one that gained or lost a test without its runner saying so all fail.
     */
    public void assertPassed(int tests) {
      assertThat(exitCode).as(output).isZero();
      Matcher passed = Pattern.compile("(?m)^# pass (\\d+)").matcher(output);
      assertThat(passed.find()).as(output).isTrue();
      assertThat(Integer.parseInt(passed.group(1))).as(output).isEqualTo(tests);
      assertThat(output).contains("\n# fail 0").contains("\n# skipped 0");
    }
  }

  private NodeSuite() {}

  /** Runs one test file of compat/ with the environment given. */
  public static Result run(String file, Map<String, String> env)
      throws IOException, InterruptedException {
    return run(DIRECTORY, file, env);
  }

  /**
   * Runs one node:test file of {@code directory} with the environment given, its packages
   * installed from its lockfile first when absent; skips (or fails in CI) without Node.js.
   */
  public static Result run(Path directory, String file, Map<String, String> env)
      throws IOException, InterruptedException {
    requireNode();
    if (!Files.isDirectory(directory.resolve("node_modules"))) {
      npm(directory, "ci", "--no-audit", "--no-fund");
    }
    Result result = exec(directory, List.of("node", "--test", "--test-reporter=tap", file), env);
    System.out.println(result.output());
    return result;
  }

  /** Runs npm in the directory, asserting it succeeds. */
  public static void npm(Path directory, String... arguments)
      throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of("npm"));
    command.addAll(List.of(arguments));
    Result result = exec(directory, command, Map.of());
    assertThat(result.exitCode())
        .as("npm " + String.join(" ", arguments) + " in " + directory + ": " + result.output())
        .isZero();
  }

  public static void requireNode() throws InterruptedException {
    boolean present;
    try {
      present = exec(DIRECTORY, List.of("node", "--version"), Map.of()).exitCode() == 0;
    } catch (IOException e) {
      present = false;
    }
    if (!present && "true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(
          "Node.js is required in CI for the client suites (./engram test installs it with "
              + "apt-get when it can)");
    }
    Assumptions.assumeTrue(present, "Node.js is not installed: the client suites are skipped");
  }

  private static Result exec(Path directory, List<String> command, Map<String, String> env)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("engram-node", ".log");
    ProcessBuilder builder = new ProcessBuilder(command)
        .directory(directory.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().putAll(env);
    Process process = builder.start();
    if (!process.waitFor(MINUTES, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      return new Result(-1, "timed out after " + MINUTES + " minutes\n" + Files.readString(log));
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    return new Result(process.exitValue(), output);
  }
}
