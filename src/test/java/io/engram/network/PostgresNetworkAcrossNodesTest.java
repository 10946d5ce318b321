package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.RawHttp;
import io.engram.support.TestServer;
import java.net.InetAddress;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one PostgreSQL: an allowlist, a firewall and a custom domain set on one node are
 * enforced by the other within a few seconds, with no restart (each node polls the network
 * version and the configuration's change log every second).
 */
class PostgresNetworkAcrossNodesTest {
  private static final String CHAT =
      "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  @Test
  void aChangeOnOneNodeIsEnforcedByTheOtherWithinSeconds() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream();
        TestServer first = TestServer.builder()
            .postgres()
            .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
            .env("DEFAULT_MODEL", "engram-chat")
            .start();
        TestServer second = TestServer.builder()
            .sharing(first)
            .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
            .env("DEFAULT_MODEL", "engram-chat")
            .start()) {
      String org = first.createOrganization("scale");
      String key = first.apiKey(org, 10_000, "admin", "inference");
      InetAddress other = InetAddress.getByName("127.0.0.2");
      assertThat(models(second, other, key)).isEqualTo(200);

      Http.Response allowlist = first
          .http
          .post("/v1/organizations/" + org + "/allowlist")
          .bearer(key)
          .json("{\"ip_ranges\":[{\"cidr\":\"127.0.0.1/32\"}]}")
          .send();
      assertThat(allowlist.status()).as(allowlist.text()).isEqualTo(200);
      long since = System.nanoTime();
      awaitTrue(() -> models(second, other, key) == 403);
      long allowlistMillis = (System.nanoTime() - since) / 1_000_000;

      int port = java.net.URI.create(upstream.baseUrl()).getPort();
      assertThat(chat(second, key)).isEqualTo(200);
      first
          .http
          .post("/v1/organizations/" + org + "/firewall")
          .bearer(key)
          .json("{\"outbound_rules\":[{\"destination\":\"127.0.0.1\",\"port\":" + port
              + ",\"protocol\":\"tcp\",\"action\":\"deny\"}]}")
          .send();
      since = System.nanoTime();
      awaitTrue(() -> chat(second, key) == 403);
      long firewallMillis = (System.nanoTime() - since) / 1_000_000;
      first.http.delete("/v1/organizations/" + org + "/firewall").bearer(key).send();
      awaitTrue(() -> chat(second, key) == 200);
      assertThat(allowlistMillis).isLessThan(5_000);
      assertThat(firewallMillis).isLessThan(5_000);
    }
  }

  private static int models(TestServer node, InetAddress from, String key) {
    try {
      return RawHttp.send(
              from,
              node.engram.port(),
              "127.0.0.1",
              "GET",
              "/v1/models",
              null,
              "Authorization",
              "Bearer " + key)
          .status();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int chat(TestServer node, String key) {
    return node.http.post("/v1/chat/completions").bearer(key).json(CHAT).send().status();
  }

  private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      if (condition.getAsBoolean()) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("not enforced on the other node within 10 seconds");
  }
}
