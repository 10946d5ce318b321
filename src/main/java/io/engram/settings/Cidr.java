package io.engram.settings;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An IPv4 range in CIDR notation ({@code 203.0.113.0/24}; a bare address is a /32), the spec's
 * allowlist format. Written back in canonical form: the network address and its prefix.
 */
public record Cidr(int network, int prefix) {
  private static final Pattern FORM =
      Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})(?:/(\\d{1,2}))?");

  /** Parses a range; IllegalArgumentException with a reader's message when it is not one. */
  public static Cidr parse(String text) {
    Matcher m = FORM.matcher(text == null ? "" : text.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not an IPv4 CIDR range such as 203.0.113.0/24");
    }
    int address = 0;
    for (int i = 1; i <= 4; i++) {
      int octet = Integer.parseInt(m.group(i));
      if (octet > 255) {
        throw new IllegalArgumentException("'" + text + "' has an octet above 255");
      }
      address = (address << 8) | octet;
    }
    int prefix = m.group(5) == null ? 32 : Integer.parseInt(m.group(5));
    if (prefix > 32) {
      throw new IllegalArgumentException("'" + text + "' has a prefix above /32");
    }
    return new Cidr(address & mask(prefix), prefix);
  }

  private static int mask(int prefix) {
    return prefix == 0 ? 0 : -1 << (32 - prefix);
  }

  /** True for an IPv4 address inside the range (an IPv6 address never is). */
  public boolean contains(byte[] address) {
    if (address.length != 4) {
      return false;
    }
    int value = ((address[0] & 0xff) << 24)
        | ((address[1] & 0xff) << 16)
        | ((address[2] & 0xff) << 8)
        | (address[3] & 0xff);
    return (value & mask(prefix)) == network;
  }

  @Override
  public String toString() {
    return ((network >>> 24) & 0xff) + "." + ((network >>> 16) & 0xff) + "."
        + ((network >>> 8) & 0xff) + "." + (network & 0xff) + "/" + prefix;
  }
}
