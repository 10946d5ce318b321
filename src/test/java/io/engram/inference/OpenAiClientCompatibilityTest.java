package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.inference.local.TinyModel;
import io.engram.support.FakeUpstream;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The compatibility suite {@code compat/openai-compat.test.mjs}: the official {@code openai} npm
 * package (pinned by compat/package-lock.json) as the client of a running Engram that serves one
 * model from a fake upstream and one in-process with jlama. The client's modules are installed
 * with {@code npm ci} when absent. Node.js is required in CI; elsewhere its absence skips the suite.
 */
class OpenAiClientCompatibilityTest {

  /** A shared assistant that keeps tasks (a built-in capability), for the assistant route. */
  private static String taskAssistant(TestServer server, String orgId) {
    String admin = server.apiKey(orgId, 1000, "admin");
    String id = server
        .http
        .post("/api/assistants")
        .bearer(admin)
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send()
        .json()
        .at("/assistant/_id")
        .asText();
    assertThat(server
            .http
            .patch("/api/assistants/" + id + "/capabilities")
            .bearer(admin)
            .json("{\"capabilities\":[\"answer_questions\",\"manage_tasks\"]}")
            .send()
            .status())
        .isEqualTo(200);
    return id;
  }

  @Test
  void theOfficialOpenAiClientWorksUnchanged() throws Exception {
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
      String assistant = taskAssistant(server, orgId);
      Map<String, String> env = Map.of(
          "ENGRAM_ASSISTANT_BASE_URL",
          "http://127.0.0.1:" + server.engram.port() + "/v1/assistants/" + assistant,
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
      NodeSuite.run("openai-compat.test.mjs", env).assertPassed(25);
      // The stream the client aborted was aborted upstream too, not left running.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (upstream.streamsAbandoned() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(upstream.streamsAbandoned()).isGreaterThanOrEqualTo(1);
      assertThat(upstream.inFlight()).isZero();
    }
  }
}
