package io.engram.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.engram.platform.json.Json;
import io.engram.platform.net.AddressBook;
import io.engram.platform.net.OutboundBlocked;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The firewall judges every address a name resolves to and pins the ones it let through: a name
 * whose DNS answer changes right after the check (DNS rebinding) still connects to the checked
 * address, and a name with an address the rules deny is reached only at its allowed ones.
 */
class OutboundFirewallTest {
  private final AtomicReference<InetAddress[]> dns = new AtomicReference<>();
  private final AtomicLong nanos = new AtomicLong();
  private final AddressBook book = new AddressBook(
      host -> {
        InetAddress[] answer = dns.get();
        if (answer == null) {
          throw new UnknownHostException(host);
        }
        return answer;
      },
      nanos::get);
  private final OutboundFirewall firewall = new OutboundFirewall(new SimpleMeterRegistry(), book);

  private static InetAddress[] addresses(String... literals) {
    InetAddress[] out = new InetAddress[literals.length];
    for (int i = 0; i < literals.length; i++) {
      out[i] = InetAddress.ofLiteral(literals[i]);
    }
    return out;
  }

  private void rules(String json) {
    firewall.put(
        "org", FirewallRules.parse(Json.read(json, com.fasterxml.jackson.databind.JsonNode.class)));
  }

  @Test
  void aRebindAfterTheCheckStillConnectsToTheCheckedAddress() throws Exception {
    rules(
        "[{\"destination\":\"169.254.0.0/16\",\"port\":\"*\",\"protocol\":\"*\",\"action\":\"deny\"}]");
    dns.set(addresses("203.0.113.10"));
    firewall.admit("org", "hooks.example.com", 443);
    // The name now points at the metadata service: the client's lookup still gets the checked one.
    dns.set(addresses("169.254.169.254"));
    assertThat(book.resolve("hooks.example.com")).containsExactly(addresses("203.0.113.10"));
    // Once the pin lapses, the next check sees the new answer and refuses it.
    nanos.addAndGet(31_000_000_000L);
    assertThatThrownBy(() -> firewall.admit("org", "hooks.example.com", 443))
        .isInstanceOf(OutboundBlocked.class)
        .hasMessageContaining("rule 1")
        .hasMessageContaining("deny 169.254.0.0/16");
  }

  @Test
  void onlyTheAllowedAddressesOfANameArePinned() throws Exception {
    rules(
        "[{\"destination\":\"10.0.0.0/8\",\"port\":\"*\",\"protocol\":\"*\",\"action\":\"deny\"}]");
    dns.set(addresses("10.1.2.3", "198.51.100.4"));
    firewall.admit("org", "mixed.example.com", 80);
    assertThat(book.resolve("mixed.example.com")).containsExactly(addresses("198.51.100.4"));
  }

  @Test
  void hostNameRulesMatchTheNameAskedForAndFirstMatchWins() {
    rules("""
        [{"destination":"api.partner.example","port":443,"protocol":"tcp","action":"allow"},
         {"destination":"*.partner.example","port":"*","protocol":"*","action":"deny"},
         {"destination":"0.0.0.0/0","port":"*","protocol":"*","action":"deny"}]""");
    dns.set(addresses("198.51.100.7"));
    firewall.admit("org", "api.partner.example", 443);
    assertThatThrownBy(() -> firewall.admit("org", "api.partner.example", 8443))
        .hasMessageContaining("rule 2");
    assertThatThrownBy(() -> firewall.admit("org", "files.partner.example", 443))
        .hasMessageContaining("rule 2");
    assertThatThrownBy(() -> firewall.admit("org", "elsewhere.example", 443))
        .hasMessageContaining("rule 3");
    // An organization without rules, and the operator's own calls, are not judged.
    firewall.admit("another-org", "elsewhere.example", 443);
    firewall.admit(null, "elsewhere.example", 443);
  }

  @Test
  void ipv6DestinationsAreJudgedByIpv6Ranges() {
    rules("[{\"destination\":\"::/0\",\"port\":\"*\",\"protocol\":\"*\",\"action\":\"deny\"}]");
    assertThatThrownBy(() -> firewall.admit("org", "2001:db8::1", 443))
        .isInstanceOf(OutboundBlocked.class);
    firewall.admit("org", "192.0.2.1", 443);
  }
}
