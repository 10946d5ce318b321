package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.inference.local.TinyModel;
import io.engram.support.FakeUpstream;
import io.engram.support.TestServer;
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
import org.junit.jupiter.api.Test;

/**
 * The compatibility suite {@code compat/openai-compat.test.mjs}: the official {@code openai} npm
 * package (pinned by compat/package-lock.json) as the client of a running Engram that serves one
 * model from a fake upstream and one in-process with jlama. The client's modules are installed
 * with {@code npm ci} when absent. Node.js is required in CI; elsewhere its absence skips the suite.
 */
class OpenAiClientCompatibilityTest {
  private static final Path SUITE = Path.of("compat");
  private static final long MINUTES = 5;

  @Test
  void theOfficialOpenAiClientWorksUnchanged() throws Exception {
    requireNode();
    installClient();
    Path models = Files.createTempDirectory("engram-compat-models");
    TinyModel.write(models, 7);
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer server = TestServer.builder()
            .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
            .env("ENGRAM_UPSTREAM_MODEL", GatewayFixture.UPSTREAM_MODEL)
            .env("DEFAULT_MODEL", GatewayFixture.MODEL)
            .env("MODEL_CACHE_DIR", models.toString())
            .env("WORKER_PROCESSES", "2")
            .start()) {
      String orgId = server.createOrganization("seed");
      Map<String, String> env = Map.of(
          "ENGRAM_BASE_URL",
          "http://127.0.0.1:" + server.engram.port() + "/v1",
          "ENGRAM_API_KEY",
          server.apiKey(orgId, 1000, "inference"),
          "ENGRAM_TOKEN",
          server.token(orgId, null, "inference:chat"),
          "ENGRAM_LIMITED_KEY",
          server.apiKey(orgId, 1, "inference"),
          "ENGRAM_REMOTE_MODEL",
          GatewayFixture.MODEL,
          "ENGRAM_LOCAL_MODEL",
          TinyModel.ID);
      Result suite =
          run(List.of("node", "--test", "--test-reporter=tap", "openai-compat.test.mjs"), env);
      System.out.println(suite.output());
      assertThat(suite.exitCode()).as(suite.output()).isZero();
      // The TAP summary: every test ran and passed (a suite that ran nothing must not pass).
      Matcher passed = Pattern.compile("(?m)^# pass (\\d+)").matcher(suite.output());
      assertThat(passed.find()).as(suite.output()).isTrue();
      assertThat(Integer.parseInt(passed.group(1))).isGreaterThanOrEqualTo(13);
      assertThat(suite.output()).contains("\n# fail 0");
      // The stream the client aborted was aborted upstream too, not left running.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (upstream.streamsAbandoned() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(upstream.streamsAbandoned()).isGreaterThanOrEqualTo(1);
      assertThat(upstream.inFlight()).isZero();
    }
  }

  private static void requireNode() throws InterruptedException {
    boolean present;
    try {
      present = run(List.of("node", "--version"), Map.of()).exitCode() == 0;
    } catch (IOException e) {
      present = false;
    }
    if (!present && "true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(
          "Node.js is required in CI for the openai client suite (./engram test "
              + "installs it with apt-get when it can)");
    }
    Assumptions.assumeTrue(
        present,
        "Node.js is not installed: the openai client compatibility suite is skipped "
            + "outside CI");
  }

  /** npm ci from the lockfile when the client is not installed (./engram test does it before the build). */
  private static void installClient() throws IOException, InterruptedException {
    if (Files.isDirectory(SUITE.resolve("node_modules/openai"))) {
      return;
    }
    Result install = run(List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of());
    assertThat(install.exitCode()).as("npm ci in compat/: " + install.output()).isZero();
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, Map<String, String> env)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile("engram-compat", ".log");
    ProcessBuilder builder = new ProcessBuilder(command)
        .directory(SUITE.toFile())
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
