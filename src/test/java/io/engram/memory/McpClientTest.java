package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.NodeSuite;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The memory's MCP server at /mcp, driven by the official MCP TypeScript SDK client
 * ({@code compat/mcp.test.mjs}, pinned by compat/package-lock.json), and its edges over plain HTTP.
 */
class McpClientTest {

  @Test
  void theOfficialMcpClientRemembersRecallsAndForgets() throws Exception {
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("seed");
      Map<String, String> env = Map.of(
          "ENGRAM_MCP_URL",
          "http://127.0.0.1:" + server.engram.port() + "/mcp",
          "ENGRAM_TOKEN",
          server.token(org, null, "memory:read", "memory:write", "memory:control", "memory:delete"),
          "ENGRAM_READER_TOKEN",
          server.token(org, null, "memory:read"),
          "ENGRAM_AGENT_TOKEN",
          server.token(org, List.of("sales"), "memory:read", "memory:write"));
      NodeSuite.run("mcp.test.mjs", env).assertPassed(5);
    }
  }

  @Test
  void theTransportsEdgesAnswerAsTheSpecificationSays() {
    try (TestServer server = TestServer.start()) {
      String org = server.createOrganization("seed");
      String token = server.token(org, null, "memory:read");
      Http.Response stream = server.http.get("/mcp").bearer(token).send();
      assertThat(stream.status()).isEqualTo(405);
      Http.Response notification = server
          .http
          .post("/mcp")
          .bearer(token)
          .json("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
          .send();
      assertThat(notification.status()).isEqualTo(202);
      Http.Response unknown = server
          .http
          .post("/mcp")
          .bearer(token)
          .json("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\"}")
          .send();
      assertThat(unknown.json().at("/error/code").asInt()).isEqualTo(-32601);
      assertThat(unknown.json().get("id").asInt()).isEqualTo(7);
      Http.Response version = server
          .http
          .post("/mcp")
          .bearer(token)
          .header("MCP-Protocol-Version", "1999-01-01")
          .json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
          .send();
      assertThat(version.status()).isEqualTo(400);
      Http.Response foreign = server
          .http
          .post("/mcp")
          .bearer(token)
          .header("Origin", "https://evil.example")
          .json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
          .send();
      assertThat(foreign.status()).isEqualTo(403);
      String key = server.apiKey(org, 1000, "admin");
      assertThat(server
              .http
              .post("/mcp")
              .bearer(key)
              .json("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
              .send()
              .status())
          .isEqualTo(403);
    }
  }
}
