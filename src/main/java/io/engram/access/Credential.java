package io.engram.access;

import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * A stored credential, without its secret. {@code grants} holds scopes (context tokens) or
 * permissions (API keys); {@code agents} is null when the credential is not bound to agents,
 * {@code models} null when it may call every model its organization sees, {@code endUser} null
 * when it is not bound to one end user of the organization's app (context tokens only).
 */
public record Credential(
    String id,
    CredentialKind kind,
    String orgId,
    String name,
    String hint,
    Set<String> grants,
    List<String> agents,
    Integer rateLimit,
    String createdBy,
    Instant createdAt,
    Instant expiresAt,
    Instant revokedAt,
    List<String> models,
    String endUser) {

  /** A credential not bound to an end user. */
  public Credential(
      String id,
      CredentialKind kind,
      String orgId,
      String name,
      String hint,
      Set<String> grants,
      List<String> agents,
      Integer rateLimit,
      String createdBy,
      Instant createdAt,
      Instant expiresAt,
      Instant revokedAt,
      List<String> models) {
    this(
        id, kind, orgId, name, hint, grants, agents, rateLimit, createdBy, createdAt, expiresAt,
        revokedAt, models, null);
  }

  public boolean isRevoked() {
    return revokedAt != null;
  }

  public boolean isExpiredAt(Instant now) {
    return expiresAt != null && !now.isBefore(expiresAt);
  }
}
