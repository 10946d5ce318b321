package io.engram;

import io.engram.support.Http;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Engram's SDKs, each built and run by its own test suite against this running Engram (never a
 * mock): sdk/typescript with node:test.
 */
class SdkTest {

  @Test
  void theTypeScriptSdk() throws Exception {
    Path sdk = Path.of("sdk/typescript");
    try (TestServer server = TestServer.start()) {
      if (!java.nio.file.Files.isDirectory(sdk.resolve("node_modules"))) {
        NodeSuite.npm(sdk, "ci", "--no-audit", "--no-fund");
      }
      NodeSuite.npm(sdk, "run", "build");
      NodeSuite.run(sdk, "test/sdk.test.mjs", environment(server)).assertPassed(8);
    }
  }

  /** What the suites read: the server, an account key, a token, an admin key, a limited token. */
  private static Map<String, String> environment(TestServer server) {
    String org = server.createOrganization("growth");
    String limitedOrg = server.createOrganization("seed");
    Http.Response limit = server.asOperator(server
        .http
        .post("/v1/organizations/" + limitedOrg + "/env")
        .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"1\"}}"));
    if (limit.status() != 200) {
      throw new IllegalStateException(limit.text());
    }
    return Map.of(
        "ENGRAM_URL",
        "http://127.0.0.1:" + server.engram.port(),
        "ENGRAM_ADMIN",
        TestServer.ADMIN_KEY,
        "ENGRAM_TOKEN",
        server.token(
            org,
            null,
            "memory:read",
            "memory:write",
            "memory:control",
            "memory:delete",
            "inference:chat"),
        "ENGRAM_KEY",
        server.apiKey(org, 1000, "admin"),
        "ENGRAM_LIMITED",
        server.token(limitedOrg, null, "memory:read"));
  }
}
