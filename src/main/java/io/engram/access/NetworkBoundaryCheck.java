package io.engram.access;

import io.engram.platform.http.ApiException;
import io.engram.platform.net.ClientAddress;
import io.engram.platform.net.NetworkBoundary;
import io.engram.settings.EffectiveConfig;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The organization's network boundary, checked before any work is done (HTTP requests and
 * WebSocket upgrades alike): a custom domain serves its own organization only (another
 * organization's credential is 401), and the client's address must be in the organization's
 * allowlist or one of its accepted peerings (403).
 */
public final class NetworkBoundaryCheck {
  private final ClientAddress clientAddress;
  private final NetworkBoundary network;

  NetworkBoundaryCheck(ClientAddress clientAddress, NetworkBoundary network) {
    this.clientAddress = clientAddress;
    this.network = network;
  }

  /**
   * @param peer the socket's remote address; {@code forwardedFor} is believed from trusted
   *     proxies only
   */
  public void require(
      EffectiveConfig config,
      Principal principal,
      String peer,
      Supplier<List<String>> forwardedFor,
      String host) {
    requireOwnDomain(principal, host);
    byte[] client = clientAddress.of(peer, forwardedFor);
    if (!config.allows(client) && !network.peered(principal.orgId(), client)) {
      throw ApiException.forbidden(
          "ip_not_allowed",
          "This organization accepts requests only from its allowed IP ranges "
              + "(network.allowed_ips, POST /allowlist); " + ClientAddress.text(client)
              + " is not in them");
    }
  }

  /** On a custom domain, only that domain's organization's credentials are accepted. */
  void requireOwnDomain(Principal principal, String host) {
    if (host == null) {
      return;
    }
    network.organizationOf(host.toLowerCase(Locale.ROOT)).ifPresent(owner -> {
      if (!owner.equals(principal.orgId())) {
        throw ApiException.unauthorized(
            "invalid_api_key",
            "This credential does not belong to the organization this domain serves");
      }
    });
  }

  /** The client's address as the allowlist sees it (through trusted proxies). */
  String clientOf(String peer, Supplier<List<String>> forwardedFor) {
    return ClientAddress.text(clientAddress.of(peer, forwardedFor));
  }
}
