package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.BesideTheRest;
import io.engram.support.FakeUpstream;
import io.engram.support.ServerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's quickstart, run as written, so it cannot rot: every {@code bash} block of its
 * "Quickstart" section, in order, in one shell, in an empty directory, as a newcomer pastes them.
 *
 * <p>Three things differ from a newcomer's machine, each stated here: {@code ./engram} runs
 * {@code io.engram.Main} from the test class path (the build is the test's own), the server's port
 * is a free one instead of 8000, and the model server the chat section points at is the fake
 * upstream. The shell stops at the first command that fails: {@code curl} gets {@code
 * --fail-with-body} (an HTTP error fails the step and shows its body) and {@code jq} gets {@code -e}
 * (a missing field fails too).
 */
@BesideTheRest
class ReadmeQuickstartTest {
  private static final Path README = Path.of("README.md");
  private static final Pattern BASH_BLOCK = Pattern.compile("(?ms)^```bash\\n(.*?)^```");
  private static final String README_PORT = "localhost:8000";
  private static final String README_UPSTREAM = "http://127.0.0.1:11434/v1";

  /**
   * Defines the stand-ins. A server started in the background ({@code ./engram serve &}) execs
   * java, so {@code $!} is the server itself and {@code kill $SERVER} stops it, as the launcher's
   * exec does; a server stopped by SIGTERM exits 143, which {@code wait} reports as success.
   */
  private static final String PREAMBLE = """
      set -euo pipefail
      PS4='+ '
      set -x
      ./engram() {
        { set +x; } 2>/dev/null # the class path would fill the trace
        echo "+ engram $*" >&2
        if [[ "${1:-}" == serve ]]; then
          exec "${ENGRAM_MAIN[@]}" "$@" >>server.log 2>&1
        elif (( BASH_SUBSHELL > 0 )); then
          exec "${ENGRAM_MAIN[@]}" "$@"
        fi
        "${ENGRAM_MAIN[@]}" "$@"
        set -x
      }
      curl() { command curl --fail-with-body --max-time 120 "$@"; }
      jq() { command jq -e "$@"; }
      wait() { builtin wait "$@" || (( $? == 143 )); }
      """;

  @TempDir
  Path home;

  @Test
  void theQuickstartRunsAsWritten() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      int port = ServerProcess.freePort();
      Path script = home.resolve("quickstart.sh");
      Files.writeString(script, script(upstream.baseUrl(), port));
      ProcessBuilder bash = new ProcessBuilder("bash", script.toString())
          .directory(home.toFile())
          .redirectOutput(home.resolve("stdout").toFile())
          .redirectError(home.resolve("stderr").toFile());
      Map<String, String> env = bash.environment();
      env.keySet().retainAll(List.of("PATH", "HOME", "LANG", "TMPDIR"));
      env.put("API_PORT", String.valueOf(port));
      env.put("API_HOST", "127.0.0.1");
      Process process = bash.start();
      // The script's last server is still running when it ends, and once bash has exited its
      // children are no longer its descendants: they are noted while it runs, and all stopped.
      java.util.Set<ProcessHandle> started = java.util.concurrent.ConcurrentHashMap.newKeySet();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(8);
      boolean finished = false;
      while (!finished && System.nanoTime() < deadline) {
        process.descendants().forEach(started::add);
        finished = process.waitFor(200, TimeUnit.MILLISECONDS);
      }
      if (!finished) {
        process.descendants().forEach(started::add);
        process.destroyForcibly();
      }
      // Whatever happened, no server outlives the test.
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      started.forEach(ProcessHandle::destroyForcibly);
      String out = read("stdout");
      String diagnosis = "quickstart failed; the last steps:\n"
          + tail(read("stderr"), 40)
          + "\n--- server log ---\n"
          + tail(read("server.log"), 30);
      assertThat(finished).as(diagnosis).isTrue();
      assertThat(process.exitValue()).as(diagnosis).isZero();
      assertThat(out)
          .as("what the steps printed")
          .containsIgnoringCase("X-RateLimit-Limit") // the API key's rate-limit headers
          .contains("April") // the memory recalled, in its context block
          .contains("Hello from the upstream") // chat through the gateway
          .contains("my-tiny") // the uploaded model
          .contains("\"completion_tokens\""); // the local engine's usage
    }
  }

  /** The README's quickstart blocks, with the stand-ins above them and the port and upstream. */
  private static String script(String upstreamUrl, int port) throws IOException {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    int start = readme.indexOf("\n## Quickstart");
    int end = readme.indexOf("\n## ", start + 1);
    assertThat(start).as("README has a Quickstart section").isPositive();
    List<String> blocks = new ArrayList<>();
    Matcher block = BASH_BLOCK.matcher(readme.substring(start, end < 0 ? readme.length() : end));
    while (block.find()) {
      blocks.add(block.group(1));
    }
    String body = String.join("\n", blocks);
    assertThat(body).contains(README_PORT, README_UPSTREAM, "./engram serve", "& SERVER=$!");
    String main = ServerProcess.mainCommand().stream()
        .map(ReadmeQuickstartTest::quoted)
        .collect(Collectors.joining(" ", "ENGRAM_MAIN=(", ")\n"));
    return main
        + PREAMBLE
        + body.replace(README_PORT, "localhost:" + port).replace(README_UPSTREAM, upstreamUrl);
  }

  private static String quoted(String word) {
    return "'" + word.replace("'", "'\\''") + "'";
  }

  private String read(String name) throws IOException {
    Path path = home.resolve(name);
    return Files.exists(path) ? Files.readString(path) : "";
  }

  private static String tail(String text, int lines) {
    List<String> all = text.lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }
}
