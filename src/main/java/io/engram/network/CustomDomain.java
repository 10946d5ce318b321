package io.engram.network;

import java.time.Instant;

/** An organization's custom domain and its verification. */
public record CustomDomain(
    String id,
    String orgId,
    String domain,
    DomainState state,
    String token,
    Instant createdAt,
    Instant verifiedAt,
    Instant lastCheckedAt,
    Instant nextCheckAt,
    String failureReason) {

  /** The same domain in another state, as of a check (or a change that needs none). */
  public CustomDomain moved(
      DomainState to, Instant verified, Instant checked, Instant nextCheck, String reason) {
    return new CustomDomain(
        id, orgId, domain, to, token, createdAt, verified, checked, nextCheck, reason);
  }

  /** The name of the TXT record that proves ownership. */
  public String recordName() {
    return "_engram-challenge." + domain;
  }

  /** The value the TXT record must hold. */
  public String recordValue() {
    return "engram-verification=" + token;
  }
}
