package io.engram.network;

import java.util.Locale;

/**
 * Where a custom domain stands (docs/network.md draws the machine). {@code pending_verification}:
 * waiting for its TXT record; {@code verified}: the record was found, the domain serves the
 * organization (TLS with the server's default certificate); {@code active}: verified and covered
 * by a certificate of the organization, which the TLS listener serves for it; {@code failed}: the
 * record was not found in time, or disappeared after verification; the domain serves nothing until
 * a verification succeeds again.
 */
public enum DomainState {
  PENDING_VERIFICATION,
  VERIFIED,
  ACTIVE,
  FAILED;

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  static DomainState fromWire(String value) {
    return valueOf(value.toUpperCase(Locale.ROOT));
  }

  /** Whether requests for the domain are served (as the organization's). */
  public boolean serving() {
    return this == VERIFIED || this == ACTIVE;
  }
}
