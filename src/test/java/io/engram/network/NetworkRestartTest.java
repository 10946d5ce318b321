package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;

/**
 * The network settings are kept: after a restart on the same data directory the firewall still
 * blocks, the allowlist and the peering are still there, and the TLS listener serves the same
 * self-signed certificate it generated at the first start.
 */
class NetworkRestartTest {
  private static final String CHAT =
      "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  @Test
  void networkSettingsAndTheServersCertificateSurviveARestart() throws Exception {
    Path data = Files.createTempDirectory("engram-network-restart");
    try (FakeUpstream upstream = new FakeUpstream()) {
      String org;
      String key;
      X509Certificate first;
      try (TestServer server = server(data, upstream)) {
        org = server.createOrganization("scale");
        key = server.apiKey(org, 1000, "admin", "inference");
        post(
            server,
            org,
            key,
            "/firewall",
            "{\"outbound_rules\":[{\"destination\":\"127.0.0.1\","
                + "\"port\":\"*\",\"protocol\":\"tcp\",\"action\":\"deny\"}]}");
        post(
            server,
            org,
            key,
            "/allowlist",
            "{\"ip_ranges\":[{\"cidr\":\"127.0.0.0/8\",\"description\":\"loopback\"}]}");
        post(
            server,
            org,
            key,
            "/vpc-peering",
            "{\"provider\":\"aws\",\"vpc_id\":\"vpc-0a1b2c3d\","
                + "\"region\":\"eu-west-1\",\"cidr\":\"172.20.0.0/16\",\"account_id\":\"123456789012\"}");
        assertThat(chat(server, key)).isEqualTo(403);
        first = TlsListenerTest.served(server.engram.tlsPort(), "localhost");
      }
      try (TestServer server = server(data, upstream)) {
        assertThat(chat(server, key)).isEqualTo(403);
        assertThat(get(server, org, key, "/allowlist")).contains("loopback");
        assertThat(get(server, org, key, "/vpc-peering")).contains("172.20.0.0/16");
        assertThat(TlsListenerTest.served(server.engram.tlsPort(), "localhost")).isEqualTo(first);
      }
    }
  }

  private static TestServer server(Path data, FakeUpstream upstream) {
    return TestServer.builder()
        .env("ENGRAM_DATA_DIR", data.toString())
        .env("API_TLS_PORT", "0")
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("DEFAULT_MODEL", "engram-chat")
        .start();
  }

  private static void post(TestServer server, String org, String key, String path, String json) {
    Http.Response response = server
        .http
        .post("/v1/organizations/" + org + path)
        .bearer(key)
        .json(json)
        .send();
    assertThat(response.status()).as(response.text()).isIn(200, 201);
  }

  private static String get(TestServer server, String org, String key, String path) {
    return server.http.get("/v1/organizations/" + org + path).bearer(key).send().text();
  }

  private static int chat(TestServer server, String key) {
    return server
        .http
        .post("/v1/chat/completions")
        .bearer(key)
        .json(CHAT)
        .send()
        .status();
  }
}
