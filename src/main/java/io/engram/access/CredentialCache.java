package io.engram.access;

import io.engram.organizations.Organization;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Credentials verified in the last moments, by secret hash (never by secret), so that a request
 * does not read its credential and organization from the database each time: on the gateway's
 * relay path those two reads were the largest cost Engram added per request (docs/benchmarks.md).
 *
 * <p>Only valid credentials are kept; a revocation on this node removes its credential at once.
 * Other nodes are told on the node bus (Redis pub/sub, with {@code REDIS_URL}) and forget it at
 * once; without Redis they keep what they verified for at most {@link #TTL}, which bounds how long
 * a key revoked elsewhere still works there. Expiry times are checked on every use.
 */
final class CredentialCache {
  static final Duration TTL = Duration.ofSeconds(2);
  static final int MAX_ENTRIES = 10_000;

  record Verified(Credential credential, Organization organization, long verifiedAtNanos) {}

  private final ConcurrentHashMap<String, Verified> bySecretHash = new ConcurrentHashMap<>();

  /** The credential verified under this hash within the TTL, or null. */
  Verified get(String secretHash) {
    Verified verified = bySecretHash.get(secretHash);
    if (verified != null && System.nanoTime() - verified.verifiedAtNanos() > TTL.toNanos()) {
      bySecretHash.remove(secretHash, verified);
      return null;
    }
    return verified;
  }

  Verified put(String secretHash, Credential credential, Organization organization) {
    if (bySecretHash.size() >= MAX_ENTRIES) {
      long now = System.nanoTime();
      bySecretHash.values().removeIf(v -> now - v.verifiedAtNanos() > TTL.toNanos());
      if (bySecretHash.size() >= MAX_ENTRIES) {
        bySecretHash.clear();
      }
    }
    Verified verified = new Verified(credential, organization, System.nanoTime());
    bySecretHash.put(secretHash, verified);
    return verified;
  }

  /** The organization changed (its plan): the next use of any of its credentials reads it again. */
  void forgetOrganization(String orgId) {
    bySecretHash
        .values()
        .removeIf(v -> v.organization() != null && v.organization().id().equals(orgId));
  }

  /** A credential changed (revoked): the next use reads it again. */
  void forget(String credentialId) {
    bySecretHash.values().removeIf(v -> v.credential().id().equals(credentialId));
  }
}
