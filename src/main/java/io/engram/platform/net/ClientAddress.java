package io.engram.platform.net;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The address a request comes from, as the allowlist judges it. The socket's peer, unless that
 * peer is a proxy the operator trusts ({@code ENGRAM_TRUSTED_PROXIES}): then {@code
 * X-Forwarded-For} is read from its right end, hop by hop, and the first address that is not a
 * trusted proxy is the client. Entries written by the client itself sit left of that one and are
 * never believed, so a forged header from an untrusted peer changes nothing.
 */
public final class ClientAddress {
  private final List<AddressRange> trustedProxies;

  public ClientAddress(List<AddressRange> trustedProxies) {
    this.trustedProxies = List.copyOf(trustedProxies);
  }

  /** The ranges of {@code ENGRAM_TRUSTED_PROXIES} (comma-separated); IllegalArgumentException. */
  public static ClientAddress parse(String csv) {
    List<AddressRange> ranges = new ArrayList<>();
    for (String part : csv.split(",")) {
      if (!part.isBlank()) {
        ranges.add(AddressRange.parse(part));
      }
    }
    return new ClientAddress(ranges);
  }

  /**
   * @param peer the socket's remote address (a literal)
   * @param forwardedFor every {@code X-Forwarded-For} header of the request, in order (read only
   *     when the peer is a trusted proxy)
   * @return the client's address as bytes (empty when the peer is not an address)
   */
  public byte[] of(String peer, java.util.function.Supplier<List<String>> forwardedFor) {
    byte[] current = bytes(peer);
    if (!trusted(current)) {
      return current;
    }
    List<String> headers = forwardedFor.get();
    if (headers == null || headers.isEmpty()) {
      return current;
    }
    List<String> hops = new ArrayList<>();
    for (String header : headers) {
      for (String hop : header.split(",")) {
        hops.add(hop.strip());
      }
    }
    for (int i = hops.size() - 1; i >= 0 && trusted(current); i--) {
      byte[] hop = bytes(hops.get(i));
      if (hop.length == 0) {
        break; // garbage in the chain: the last trusted hop is as far as we can see
      }
      current = hop;
    }
    return current;
  }

  /** The address as text, for messages. */
  public static String text(byte[] address) {
    try {
      return address.length == 0
          ? "an unknown address"
          : InetAddress.getByAddress(address).getHostAddress();
    } catch (java.net.UnknownHostException e) {
      return "an unknown address";
    }
  }

  private boolean trusted(byte[] address) {
    for (AddressRange range : trustedProxies) {
      if (range.contains(address)) {
        return true;
      }
    }
    return false;
  }

  private static byte[] bytes(String literal) {
    if (literal == null || literal.isEmpty()) {
      return new byte[0];
    }
    String value = literal.startsWith("[") && literal.endsWith("]")
        ? literal.substring(1, literal.length() - 1)
        : literal;
    if (!AddressRange.looksLikeAddress(value)) {
      return new byte[0];
    }
    try {
      return InetAddress.ofLiteral(value).getAddress();
    } catch (IllegalArgumentException e) {
      return new byte[0];
    }
  }
}
