package io.engram.inference;

import io.engram.support.FakeUpstream;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The compatibility suite {@code compat/anthropic-compat.test.mjs}: the official Anthropic
 * TypeScript SDK (pinned by compat/package-lock.json) as the client of {@code POST /v1/messages}
 * on a running Engram whose model is served by a fake OpenAI-compatible upstream. Node.js is
 * required in CI; elsewhere its absence skips the suite.
 */
class AnthropicClientCompatibilityTest {

  @Test
  void theOfficialAnthropicClientWorksUnchanged() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer server = TestServer.builder()
            .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
            .env("ENGRAM_UPSTREAM_MODEL", GatewayFixture.UPSTREAM_MODEL)
            .env("DEFAULT_MODEL", GatewayFixture.MODEL)
            .start()) {
      String orgId = server.createOrganization("seed");
      Map<String, String> env = Map.of(
          "ENGRAM_ROOT",
          "http://127.0.0.1:" + server.engram.port(),
          "ENGRAM_API_KEY",
          server.apiKey(orgId, 1000, "inference"),
          "ENGRAM_TOKEN",
          server.token(orgId, null, "inference:chat"),
          "ENGRAM_MODEL",
          GatewayFixture.MODEL);
      NodeSuite.run("anthropic-compat.test.mjs", env).assertPassed(8);
    }
  }
}
