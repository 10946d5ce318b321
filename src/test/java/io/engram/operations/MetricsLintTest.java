package io.engram.operations;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * /metrics as Prometheus's own linter reads it ({@code promtool check metrics}): no warning. The
 * test command fetches promtool (ENGRAM_PROMTOOL); with CI=true its absence fails the test.
 */
class MetricsLintTest {

  @Test
  void promtoolFindsNothingToSayAboutTheMetrics() throws Exception {
    String promtool = System.getenv("ENGRAM_PROMTOOL");
    boolean present = promtool != null && Files.isExecutable(Path.of(promtool));
    if (!present && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("ENGRAM_PROMTOOL is not set or not executable: run ./engram test");
    }
    Assumptions.assumeTrue(
        present, "promtool not found (ENGRAM_PROMTOOL): ./engram test fetches it");
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("seed");
      String key = server.apiKey(org, 1000, "admin");
      server.http.get("/v1/organizations/" + org).bearer(key).send();
      server.http.get("/v1/models").bearer(key).send();
      Http.Response metrics = server.asOperator(server.http.get("/metrics"));
      assertThat(metrics.status()).isEqualTo(200);
      Process check = new ProcessBuilder(promtool, "check", "metrics")
          .redirectErrorStream(true)
          .start();
      check.getOutputStream().write(metrics.text().getBytes(StandardCharsets.UTF_8));
      check.getOutputStream().close();
      String said = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(check.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(said).as("promtool check metrics").isEmpty();
      assertThat(check.exitValue()).isZero();
    }
  }
}
