package io.engram.platform.net;

import java.net.InetAddress;
import java.util.Arrays;

/**
 * A block of IPv4 or IPv6 addresses in CIDR notation ({@code 10.1.0.0/16}, {@code fd00::/8}; a
 * bare address is one address). Written back in canonical form: the network address and its
 * prefix.
 */
public record AddressRange(byte[] network, int prefix) {

  /** Parses a range; IllegalArgumentException with a reader's message when it is not one. */
  public static AddressRange parse(String text) {
    String value = text == null ? "" : text.strip();
    int slash = value.indexOf('/');
    String address = slash < 0 ? value : value.substring(0, slash);
    byte[] bytes;
    try {
      if (!looksLikeAddress(address)) {
        throw new IllegalArgumentException();
      }
      bytes = InetAddress.ofLiteral(address).getAddress();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is not an IP address or CIDR range such as 203.0.113.0/24");
    }
    int bits = bytes.length * 8;
    int prefix = bits;
    if (slash >= 0) {
      String digits = value.substring(slash + 1);
      if (!digits.matches("\\d{1,3}") || Integer.parseInt(digits) > bits) {
        throw new IllegalArgumentException("'" + text + "' needs a prefix from /0 to /" + bits);
      }
      prefix = Integer.parseInt(digits);
    }
    return new AddressRange(masked(bytes, prefix), prefix);
  }

  /**
   * Whether the text is written as an IP address (digits and dots, or anything with a colon)
   * rather than as a host name; it may still be a malformed one.
   */
  public static boolean looksLikeAddress(String text) {
    if (text.isEmpty() || text.indexOf(':') >= 0) {
      return !text.isEmpty();
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c != '.' && (c < '0' || c > '9')) {
        return false;
      }
    }
    return true;
  }

  private static byte[] masked(byte[] address, int prefix) {
    byte[] out = address.clone();
    for (int i = 0; i < out.length; i++) {
      int keep = Math.max(0, Math.min(8, prefix - i * 8));
      out[i] = (byte) (out[i] & (0xff << (8 - keep)));
    }
    return out;
  }

  public boolean isIpv4() {
    return network.length == 4;
  }

  /** True for an address of the same family inside the range. */
  public boolean contains(byte[] address) {
    if (address.length != network.length) {
      return false;
    }
    int full = prefix / 8;
    for (int i = 0; i < full; i++) {
      if (address[i] != network[i]) {
        return false;
      }
    }
    int rest = prefix % 8;
    return rest == 0 || ((address[full] ^ network[full]) & (0xff << (8 - rest)) & 0xff) == 0;
  }

  /** True when the two ranges share at least one address. */
  public boolean overlaps(AddressRange other) {
    return other.network.length == network.length
        && (contains(other.network) || other.contains(network));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AddressRange r && r.prefix == prefix && Arrays.equals(r.network, network);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(network) * 31 + prefix;
  }

  @Override
  public String toString() {
    try {
      return InetAddress.getByAddress(network).getHostAddress() + "/" + prefix;
    } catch (java.net.UnknownHostException e) {
      throw new IllegalStateException(e);
    }
  }
}
