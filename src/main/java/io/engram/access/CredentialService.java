package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.platform.Ids;
import io.engram.platform.cluster.NodeBus;
import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Issues, lists, revokes and verifies bearer credentials. A secret exists in clear only in the
 * {@link Issued} returned at creation; afterwards only its hash and hint are kept.
 */
public final class CredentialService {

  /** A just-created credential and its secret, which is shown once and never again. */
  public record Issued(Credential credential, String secret) {}

  /**
   * What a new credential is allowed to do; grants are already-validated wire names. {@code
   * models} is null for every model the organization sees.
   */
  public record Grant(
      Set<String> grants,
      List<String> agents,
      Integer rateLimit,
      List<String> models,
      String endUser) {
    public Grant(Set<String> grants, List<String> agents, Integer rateLimit) {
      this(grants, agents, rateLimit, null, null);
    }

    public Grant(Set<String> grants, List<String> agents, Integer rateLimit, List<String> models) {
      this(grants, agents, rateLimit, models, null);
    }
  }

  private static final String ENV_ADMIN_KEY_ID = "env:ENGRAM_ADMIN_KEY";

  private final CredentialStore store;
  private final OrganizationStore organizations;
  private final Clock clock;
  private final String envAdminKeyHash;
  private final CredentialCache verified = new CredentialCache();

  /** Channels of the node bus: what other nodes must forget from their caches at once. */
  static final String REVOKED = "engram:credential-revoked";

  static final String ORGANIZATION_CHANGED = "engram:organization-changed";

  private final NodeBus bus;

  /**
   * @param bus where revocations and organization changes are told to the other nodes, which
   *     forget the credential at once instead of within their cache's two seconds
   */
  public CredentialService(
      CredentialStore store,
      OrganizationStore organizations,
      Clock clock,
      String envAdminKey,
      NodeBus bus) {
    this.store = store;
    this.organizations = organizations;
    this.clock = clock;
    this.envAdminKeyHash =
        envAdminKey == null || envAdminKey.isEmpty() ? null : SecretFormat.hash(envAdminKey);
    this.bus = bus;
    bus.subscribe(REVOKED, verified::forget);
    bus.subscribe(ORGANIZATION_CHANGED, verified::forgetOrganization);
  }

  public Issued issue(
      CredentialKind kind,
      String orgId,
      String name,
      Grant grant,
      Instant expiresAt,
      String createdBy) {
    Instant now = clock.instant();
    String secret = SecretFormat.generate(kind.prefix());
    Credential credential = new Credential(
        Ids.newId(kind.idPrefix(), now.toEpochMilli()),
        kind,
        orgId,
        name,
        SecretFormat.hint(secret),
        grant.grants(),
        grant.agents(),
        grant.rateLimit(),
        createdBy,
        now,
        expiresAt,
        null,
        grant.models(),
        grant.endUser());
    store.insert(credential, SecretFormat.hash(secret));
    return new Issued(credential, secret);
  }

  public List<Credential> list(CredentialKind kind, String orgId) {
    return store.list(kind, orgId);
  }

  public Optional<Credential> find(CredentialKind kind, String orgId, String id) {
    return store.find(kind, orgId, id);
  }

  public Optional<Credential> revoke(CredentialKind kind, String orgId, String id) {
    Optional<Credential> revoked = store.revoke(kind, orgId, id, clock.instant());
    verified.forget(id);
    bus.publish(REVOKED, id);
    return revoked;
  }

  /**
   * Creates an account key on first start when none exists and none is configured, so a fresh
   * install can be administered. Returns the secret to show once.
   */
  /**
   * The organization's record changed (plan, budget): credentials this node verified read it again
   * on their next use. Other nodes hear of it on the bus at once (with Redis), else within the cache's two seconds.
   */
  public void organizationChanged(String orgId) {
    verified.forgetOrganization(orgId);
    bus.publish(ORGANIZATION_CHANGED, orgId);
  }

  public Optional<String> bootstrapAccountKey() {
    if (envAdminKeyHash != null || store.countActiveAccountKeys(clock.instant()) > 0) {
      return Optional.empty();
    }
    Issued issued = issue(
        CredentialKind.ACCOUNT_KEY,
        null,
        "bootstrap",
        new Grant(Set.of(), null, null),
        null,
        "first-start");
    return Optional.of(issued.secret());
  }

  /** Resolves a bearer secret to its principal, or fails with a 401 that says why. */
  public Principal authenticate(String secret) {
    String hash = SecretFormat.hash(secret);
    if (envAdminKeyHash != null && SecretFormat.sameHash(envAdminKeyHash, hash)) {
      return new Principal(
          Principal.Kind.ACCOUNT, ENV_ADMIN_KEY_ID, null, Set.of(), null, null, null, null);
    }
    CredentialKind kind = CredentialKind.ofSecret(secret).orElseThrow(CredentialService::invalid);
    if (!SecretFormat.isWellFormed(kind.prefix(), secret)) {
      throw invalid();
    }
    CredentialCache.Verified known = verified.get(hash);
    if (known == null) {
      known = verify(hash);
    }
    Credential credential = known.credential();
    if (credential.isExpiredAt(clock.instant())) {
      throw ApiException.unauthorized("expired_api_key", "This credential has expired");
    }
    Organization org = known.organization();
    Principal.Kind principalKind = switch (credential.kind()) {
      case ACCOUNT_KEY -> Principal.Kind.ACCOUNT;
      case API_KEY -> Principal.Kind.API_KEY;
      case CONTEXT_TOKEN -> Principal.Kind.CONTEXT_TOKEN;
    };
    return new Principal(
        principalKind,
        credential.id(),
        org,
        credential.grants(),
        credential.agents(),
        credential.rateLimit(),
        null,
        null,
        credential.models(),
        credential.endUser());
  }

  /** Reads a credential and its organization from the database and remembers them if valid. */
  private CredentialCache.Verified verify(String hash) {
    Credential credential = store.findBySecretHash(hash).orElseThrow(CredentialService::invalid);
    if (credential.isRevoked()) {
      throw ApiException.unauthorized("revoked_api_key", "This credential has been revoked");
    }
    Organization org = credential.orgId() == null
        ? null
        : organizations.find(credential.orgId()).orElseThrow(CredentialService::invalid);
    return verified.put(hash, credential, org);
  }

  static ApiException invalid() {
    return ApiException.unauthorized("invalid_api_key", "Invalid API key or token");
  }
}
