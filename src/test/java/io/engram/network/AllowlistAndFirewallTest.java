package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.RawHttp;
import io.engram.support.TestServer;
import java.net.InetAddress;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The IP allowlist and the outbound firewall change what the server does: proved through real
 * HTTP from two loopback addresses (127.0.0.1 and 127.0.0.2), a proxy the operator trusts, and a
 * chat whose upstream call the firewall blocks and lets through.
 */
class AllowlistAndFirewallTest {
  private static final String CHAT =
      "{\"model\":\"engram-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  private static FakeUpstream upstream;
  private static TestServer server;
  private static InetAddress second;
  private static InetAddress first;

  @BeforeAll
  static void start() throws Exception {
    upstream = new FakeUpstream();
    server = TestServer.builder()
        .env("ENGRAM_UPSTREAM_URL", upstream.baseUrl())
        .env("DEFAULT_MODEL", "engram-chat")
        .env("ENGRAM_TRUSTED_PROXIES", "127.0.0.3/32")
        .start();
    first = InetAddress.getByName("127.0.0.1");
    second = InetAddress.getByName("127.0.0.2");
  }

  @AfterAll
  static void stop() {
    server.close();
    upstream.close();
  }

  private record Org(String id, String key) {}

  private static Org org() {
    String id = server.createOrganization("seed");
    return new Org(id, server.apiKey(id, 1000, "inference", "admin"));
  }

  private static RawHttp.Response models(InetAddress from, Org org, String... headers)
      throws Exception {
    String[] all = new String[headers.length + 2];
    all[0] = "Authorization";
    all[1] = "Bearer " + org.key();
    System.arraycopy(headers, 0, all, 2, headers.length);
    return RawHttp.send(from, server.engram.port(), "127.0.0.1", "GET", "/v1/models", null, all);
  }

  private static Http.Response post(Org org, String path, String json) {
    return server
        .http
        .post("/v1/organizations/" + org.id() + path)
        .bearer(org.key())
        .json(json)
        .send();
  }

  @Test
  void theAllowlistIsOneListWithTheConfigurationAndRefusesOtherAddresses() throws Exception {
    Org org = org();
    Http.Response set = post(org, "/allowlist", """
        {"ip_ranges":[{"cidr":"127.0.0.1/32","description":"the office"},
                      {"cidr":"203.0.113.7"}]}""");
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(set.json().at("/ip_ranges/0/description").asText()).isEqualTo("the office");
    assertThat(set.json().at("/ip_ranges/1/cidr").asText()).isEqualTo("203.0.113.7/32");
    // The configuration shows the same list.
    Http.Response config = server
        .http
        .get("/v1/organizations/" + org.id() + "/config")
        .bearer(org.key())
        .send();
    assertThat(config.text()).contains("127.0.0.1/32").contains("203.0.113.7/32");

    assertThat(models(first, org).status()).isEqualTo(200);
    RawHttp.Response refused = models(second, org);
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("ip_not_allowed");
    assertThat(refused.json().at("/error/message").asText()).contains("127.0.0.2");
    // A forged X-Forwarded-For from a peer the operator does not trust changes nothing.
    assertThat(models(second, org, "X-Forwarded-For", "127.0.0.1").status()).isEqualTo(403);

    // PATCH /config replaces the same list; the description of a range that stays is kept.
    Http.Response patched = server
        .http
        .patch("/v1/organizations/" + org.id() + "/config")
        .bearer(org.key())
        .json("{\"network\":{\"allowed_ips\":[\"127.0.0.0/30\",\"127.0.0.1/32\"]}}")
        .send();
    assertThat(patched.status()).as(patched.text()).isEqualTo(200);
    JsonNode listed = server
        .http
        .get("/v1/organizations/" + org.id() + "/allowlist")
        .bearer(org.key())
        .send()
        .json();
    assertThat(listed.at("/ip_ranges/0/cidr").asText()).isEqualTo("127.0.0.0/30");
    assertThat(listed.at("/ip_ranges/1/description").asText()).isEqualTo("the office");
    assertThat(models(second, org).status()).isEqualTo(200);

    // An empty list allows every address again.
    assertThat(post(org, "/allowlist", "{\"ip_ranges\":[]}")
            .json()
            .get("allows_all")
            .asBoolean())
        .isTrue();
    assertThat(models(second, org).status()).isEqualTo(200);
  }

  @Test
  void forwardedForIsBelievedOnlyFromATrustedProxy() throws Exception {
    Org org = org();
    assertThat(post(org, "/allowlist", "{\"ip_ranges\":[{\"cidr\":\"198.51.100.0/24\"}]}")
            .status())
        .isEqualTo(200);
    InetAddress proxy = InetAddress.getByName("127.0.0.3");
    // Through the trusted proxy: the client is the address the proxy appended (the rightmost).
    assertThat(models(proxy, org, "X-Forwarded-For", "10.9.9.9, 198.51.100.20").status())
        .isEqualTo(200);
    assertThat(models(proxy, org, "X-Forwarded-For", "198.51.100.20, 10.9.9.9").status())
        .isEqualTo(403);
    assertThat(models(proxy, org).status()).isEqualTo(403); // the proxy itself is not allowed
    // The same header from an untrusted peer is ignored: judged by its own address.
    assertThat(models(second, org, "X-Forwarded-For", "198.51.100.20").status()).isEqualTo(403);
  }

  @Test
  void badAllowlistsAreRefusedNamingTheEntryAndChangeNothing() {
    Org org = org();
    post(org, "/allowlist", "{\"ip_ranges\":[{\"cidr\":\"127.0.0.0/8\"}]}");
    String many = IntStream.range(0, 101)
        .mapToObj(i -> "{\"cidr\":\"10.0." + i + ".0/24\"}")
        .collect(Collectors.joining(",", "{\"ip_ranges\":[", "]}"));
    String[][] cases = {
      {"{}", "ip_ranges"},
      {"{\"ip_ranges\":\"10.0.0.0/8\"}", "ip_ranges"},
      {"{\"ip_ranges\":[{\"cidr\":\"10.0.0.0/33\"}]}", "ip_ranges[0].cidr"},
      {"{\"ip_ranges\":[{\"cidr\":\"2001:db8::/32\"}]}", "ip_ranges[0].cidr"},
      {"{\"ip_ranges\":[{\"cidr\":\"10.0.0.0/8\"},{\"cidr\":\"10.1.2.3/8\"}]}", "ip_ranges[1].cidr"
      },
      {"{\"ip_ranges\":[{\"cidr\":\"10.0.0.0/8\",\"note\":\"x\"}]}", "ip_ranges[0].note"},
      {"{\"ip_ranges\":[{\"cidr\":\"10.0.0.0/8\",\"description\":7}]}", "ip_ranges[0].description"},
      {"{\"ip_ranges\":[\"10.0.0.0/8\"]}", "ip_ranges[0]"},
      {many, "ip_ranges"},
    };
    for (String[] c : cases) {
      Http.Response refused = post(org, "/allowlist", c[0]);
      assertThat(refused.status()).as(c[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
    }
    assertThat(server
            .http
            .get("/v1/organizations/" + org.id() + "/allowlist")
            .bearer(org.key())
            .send()
            .json()
            .at("/ip_ranges/0/cidr")
            .asText())
        .isEqualTo("127.0.0.0/8");
  }

  @Test
  void theFirewallBlocksTheUpstreamCallNamingTheRuleAndAnAllowRuleRestoresIt() {
    Org org = org();
    int port = java.net.URI.create(upstream.baseUrl()).getPort();
    assertThat(chat(org).status()).isEqualTo(200);
    int before = upstream.requests().size();

    Http.Response set = post(org, "/firewall", """
        {"outbound_rules":[{"destination":"127.0.0.0/8","port":%d,"protocol":"tcp","action":"deny"}]}""".formatted(port));
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    Http.Response blocked = chat(org);
    assertThat(blocked.status()).isEqualTo(403);
    assertThat(blocked.json().at("/error/code").asText()).isEqualTo("outbound_blocked");
    assertThat(blocked.json().at("/error/message").asText())
        .contains("rule 1")
        .contains("deny 127.0.0.0/8 port " + port);
    assertThat(upstream.requests()).hasSize(before);

    // First match wins: an allow rule before the deny lets the call through.
    assertThat(post(org, "/firewall", """
        {"outbound_rules":[
          {"destination":"127.0.0.1","port":"*","protocol":"*","action":"allow"},
          {"destination":"0.0.0.0/0","port":"*","protocol":"*","action":"deny"}]}""").status()).isEqualTo(200);
    assertThat(chat(org).status()).isEqualTo(200);
    // Another organization's rules are its own.
    Org other = org();
    post(other, "/firewall", """
        {"outbound_rules":[{"destination":"0.0.0.0/0","port":"*","protocol":"tcp","action":"deny"}]}""");
    assertThat(chat(other).status()).isEqualTo(403);
    assertThat(chat(org).status()).isEqualTo(200);
    assertThat(server.http.get("/metrics").bearer(TestServer.ADMIN_KEY).send().text())
        .contains("engram_outbound_connections_total{verdict=\"blocked\"}");
    // DELETE clears the rules.
    assertThat(server
            .http
            .delete("/v1/organizations/" + other.id() + "/firewall")
            .bearer(other.key())
            .send()
            .status())
        .isEqualTo(204);
    assertThat(chat(other).status()).isEqualTo(200);
  }

  @Test
  void alertWebhooksPassTheFirewallToo() {
    Org org = org();
    Http.Response channel = post(org, "/alert-channels", "{\"url\":\"http://127.0.0.1:9/hook\"}");
    assertThat(channel.status()).as(channel.text()).isEqualTo(201);
    post(org, "/firewall", """
        {"outbound_rules":[{"destination":"127.0.0.1","port":9,"protocol":"tcp","action":"deny"}]}""");
    Http.Response delivery =
        post(org, "/alert-channels/" + channel.json().get("id").asText() + "/test", "{}");
    assertThat(delivery.json().get("outcome").asText()).isEqualTo("blocked");
    assertThat(delivery.json().get("error").asText()).contains("rule 1");
  }

  @Test
  void badFirewallRulesAreRefusedNamingTheField() {
    Org org = org();
    String[][] cases = {
      {"{}", "outbound_rules"},
      {"{\"outbound_rules\":{}}", "outbound_rules"},
      {
        rule("\"destination\":\"\",\"port\":1,\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].destination"
      },
      {
        rule("\"destination\":\"bad host\",\"port\":1,\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].destination"
      },
      {
        rule("\"destination\":\"10.0.0.0/40\",\"port\":1,\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].destination"
      },
      {
        rule("\"destination\":\"a.example\",\"port\":0,\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].port"
      },
      {
        rule(
            "\"destination\":\"a.example\",\"port\":70000,\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].port"
      },
      {
        rule(
            "\"destination\":\"a.example\",\"port\":\"80\",\"protocol\":\"tcp\",\"action\":\"deny\""),
        "outbound_rules[0].port"
      },
      {
        rule("\"destination\":\"a.example\",\"port\":80,\"protocol\":\"udp\",\"action\":\"deny\""),
        "outbound_rules[0].protocol"
      },
      {
        rule("\"destination\":\"a.example\",\"port\":80,\"protocol\":\"tcp\",\"action\":\"drop\""),
        "outbound_rules[0].action"
      },
      {
        rule(
            "\"destination\":\"a.example\",\"port\":80,\"protocol\":\"tcp\",\"action\":\"deny\",\"x\":1"),
        "outbound_rules[0].x"
      },
    };
    for (String[] c : cases) {
      Http.Response refused = post(org, "/firewall", c[0]);
      assertThat(refused.status()).as(c[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(c[0]).isEqualTo(c[1]);
    }
    Http.Response ok = post(
        org,
        "/firewall",
        rule(
            "\"destination\":\"*.Example.COM\",\"port\":443,\"protocol\":\"tcp\",\"action\":\"allow\""));
    assertThat(ok.json().at("/outbound_rules/0").toString())
        .isEqualTo(
            "{\"destination\":\"*.example.com\",\"port\":443,\"protocol\":\"tcp\",\"action\":\"allow\"}");
    assertThat(ok.json().get("default_action").asText()).isEqualTo("allow");
  }

  private static String rule(String fields) {
    return "{\"outbound_rules\":[{" + fields + "}]}";
  }

  private static Http.Response chat(Org org) {
    return server.http.post("/v1/chat/completions").bearer(org.key()).json(CHAT).send();
  }
}
