package io.engram.network;

import io.engram.platform.net.AddressBook;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The organizations' outbound firewalls, in force. Each connection Engram opens for an
 * organization is admitted here first: the host is resolved, every address is judged by the
 * rules (first match decides, none: allowed), and only the allowed addresses are pinned as the
 * host's answer, so the client connects to one of them. When none is allowed the call fails at
 * once with the refusing rule's position and text. Rules come from {@link NetworkSync}, on every
 * node within a second of a change.
 */
public final class OutboundFirewall implements Egress {
  private volatile Map<String, FirewallRules> byOrganization = Map.of();
  private final Counter allowed;
  private final Counter blocked;
  private final AddressBook addresses;

  public OutboundFirewall(MeterRegistry registry) {
    this(registry, AddressBook.shared());
  }

  /** @param addresses where hosts are resolved and checked answers pinned */
  OutboundFirewall(MeterRegistry registry, AddressBook addresses) {
    this.addresses = addresses;
    this.allowed = Counter.builder("engram_outbound_connections_total")
        .description("Outbound calls made for organizations with outbound rules, by verdict")
        .tag("verdict", "allowed")
        .register(registry);
    this.blocked = Counter.builder("engram_outbound_connections_total")
        .description("Outbound calls made for organizations with outbound rules, by verdict")
        .tag("verdict", "blocked")
        .register(registry);
  }

  /** Replaces the rules in force (a reload from the database). */
  void replace(Map<String, FirewallRules> rules) {
    byOrganization = Map.copyOf(rules);
  }

  /** One organization's rules changed on this node: in force at once. */
  void put(String orgId, FirewallRules rules) {
    Map<String, FirewallRules> next = new java.util.HashMap<>(byOrganization);
    if (rules.rules().isEmpty()) {
      next.remove(orgId);
    } else {
      next.put(orgId, rules);
    }
    byOrganization = Map.copyOf(next);
  }

  FirewallRules rules(String orgId) {
    return byOrganization.getOrDefault(orgId, FirewallRules.NONE);
  }

  @Override
  public void admit(String orgId, String host, int port) {
    FirewallRules rules = orgId == null ? null : byOrganization.get(orgId);
    if (rules == null || host == null) {
      return;
    }
    InetAddress[] resolved;
    try {
      resolved = addresses.resolve(host);
    } catch (UnknownHostException e) {
      // Nothing to connect to: the call fails as unreachable, unless a rule names the host.
      FirewallRules.Verdict verdict = rules.decide(host, new byte[0], port);
      if (!verdict.allowed()) {
        throw refusal(host, port, verdict);
      }
      return;
    }
    List<InetAddress> passed = new ArrayList<>(resolved.length);
    FirewallRules.Verdict refused = null;
    for (InetAddress address : resolved) {
      FirewallRules.Verdict verdict = rules.decide(host, address.getAddress(), port);
      if (verdict.allowed()) {
        passed.add(address);
      } else if (refused == null) {
        refused = verdict;
      }
    }
    if (passed.isEmpty()) {
      throw refusal(host, port, refused);
    }
    addresses.pin(host, passed.toArray(InetAddress[]::new));
    allowed.increment();
  }

  private OutboundBlocked refusal(String host, int port, FirewallRules.Verdict verdict) {
    blocked.increment();
    return new OutboundBlocked(
        "The organization's outbound firewall blocks connections to " + host + ":" + port
            + " (rule " + verdict.ruleNumber() + ": " + verdict.rule().describe() + ")",
        verdict.ruleNumber());
  }
}
