package io.engram.network;

import io.engram.platform.http.ApiException;
import io.engram.settings.Cidr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * What this node enforces, read whole from the database whenever the network version moves (a
 * change on any node bumps it in its transaction; {@link #refresh} runs every second): the
 * custom domains by host, the organizations' firewalls, their active peerings' ranges, and the
 * certificates the TLS listener serves. Requests read the last snapshot: a few map lookups.
 */
public final class NetworkState implements io.engram.platform.net.NetworkBoundary {
  /** The snapshot. */
  record Snapshot(
      long version,
      Map<String, CustomDomain> domainsByHost,
      Map<String, List<Cidr>> peeredRanges,
      List<StoredCertificate> certificates) {}

  private final NetworkStore store;
  private final OutboundFirewall firewall;
  private final List<Consumer<Snapshot>> listeners = new ArrayList<>();
  private volatile Snapshot snapshot = new Snapshot(-1, Map.of(), Map.of(), List.of());

  NetworkState(NetworkStore store, OutboundFirewall firewall) {
    this.store = store;
    this.firewall = firewall;
  }

  /** Called with each new snapshot (the TLS listener reloads its certificates). */
  void onChange(Consumer<Snapshot> listener) {
    listeners.add(listener);
    listener.accept(snapshot);
  }

  Snapshot snapshot() {
    return snapshot;
  }

  /** Reloads when the version moved (or always, when {@code force}). */
  synchronized void refresh(boolean force) {
    long version = store.version();
    if (!force && version == snapshot.version()) {
      return;
    }
    Map<String, CustomDomain> domains = new HashMap<>();
    store.allDomains().forEach(domain -> domains.put(domain.domain(), domain));
    Map<String, List<Cidr>> peered = new HashMap<>();
    store
        .activePeerings()
        .forEach(link -> peered
            .computeIfAbsent(link.orgId(), id -> new ArrayList<>())
            .add(Cidr.parse(link.request().path("cidr").asText())));
    firewall.replace(store.firewalls());
    snapshot =
        new Snapshot(version, Map.copyOf(domains), Map.copyOf(peered), store.allCertificates());
    listeners.forEach(listener -> listener.accept(snapshot));
  }

  /**
   * The organization a request for {@code host} belongs to: empty for a name that is not a custom
   * domain (the server's own); 404 for a custom domain that is not serving (yet or any more).
   */
  @Override
  public Optional<String> organizationOf(String host) {
    if (host == null || snapshot.domainsByHost().isEmpty()) {
      return Optional.empty();
    }
    CustomDomain domain = snapshot.domainsByHost().get(host);
    if (domain == null) {
      return Optional.empty();
    }
    if (!domain.state().serving()) {
      throw ApiException.notFound(
          "domain_not_verified",
          null,
          "This domain is not verified: the organization that registered it has not yet proved "
              + "it owns it (docs/network.md)");
    }
    return Optional.of(domain.orgId());
  }

  /** Whether an active VPC peering of the organization covers the address. */
  @Override
  public boolean peered(String orgId, byte[] address) {
    List<Cidr> ranges = snapshot.peeredRanges().get(orgId);
    if (ranges == null) {
      return false;
    }
    for (Cidr range : ranges) {
      if (range.contains(address)) {
        return true;
      }
    }
    return false;
  }
}
