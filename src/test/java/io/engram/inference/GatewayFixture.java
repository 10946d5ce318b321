package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A server whose generation goes to a {@link FakeUpstream}, with an organization and its
 * credentials. As a JUnit extension ({@code @RegisterExtension static}) it serves a whole test
 * class, puts the upstream back to normal after each test and closes after the last.
 */
final class GatewayFixture implements AutoCloseable, AfterAllCallback, AfterEachCallback {
  static final String MODEL = "engram-chat";
  static final String UPSTREAM_MODEL = "upstream-model-7b";
  static final String UPSTREAM_KEY = "upstream-secret-key";

  final FakeUpstream upstream;
  final TestServer server;
  final String orgId;
  /** A context access token with inference:chat and every memory scope, bound to no agent. */
  final String token;
  /** An API key with the inference permission. */
  final String key;

  GatewayFixture(String plan, Map<String, String> env) {
    this.upstream = new FakeUpstream();
    TestServer.Builder builder = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("ENGRAM_UPSTREAM_MODEL", UPSTREAM_MODEL)
        .env("ENGRAM_UPSTREAM_API_KEY", UPSTREAM_KEY)
        .env("DEFAULT_MODEL", MODEL);
    env.forEach(builder::env);
    this.server = builder.start();
    this.orgId = server.createOrganization(plan);
    this.token = server.token(
        orgId, null, "inference:chat", "memory:read", "memory:write", "memory:control");
    this.key = server.apiKey(orgId, 1000, "inference");
  }

  static GatewayFixture start() {
    return new GatewayFixture("seed", Map.of());
  }

  Http.Call chat(String credential, String json) {
    return server.http.post("/v1/chat/completions").bearer(credential).json(json);
  }

  static String body(String content, String extra) {
    return "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":"
        + Json.write(content) + "}]" + (extra.isEmpty() ? "" : "," + extra) + "}";
  }

  /** Encodes a memory (organization-wide, or in an agent) and returns its id. */
  String remember(String text, String agent) {
    String path = agent == null ? "/v1/memory" : "/v1/memory/agents/" + agent;
    Http.Response response = server
        .http
        .post(path)
        .bearer(token)
        .json(Json.write(Map.of("text", text)))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  /** The data lines of an SSE body, in order ("[DONE]" included). */
  static List<String> events(String body) {
    return io.engram.support.Sse.events(body);
  }

  static List<JsonNode> chunks(String body) {
    return io.engram.support.Sse.chunks(body);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    upstream.script(FakeUpstream.Script.NORMAL);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  @Override
  public void close() {
    server.close();
    upstream.close();
  }
}
