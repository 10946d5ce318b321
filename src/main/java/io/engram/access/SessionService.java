package io.engram.access;

import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.User;
import io.engram.organizations.UserStore;
import io.engram.platform.Ids;
import io.engram.platform.http.ApiException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Signs users in and out of the product UI. A session is an {@code engs_} secret in an HttpOnly
 * cookie plus a CSRF token the UI echoes in {@code X-CSRF-Token} on state-changing requests;
 * both are stored hashed.
 */
public final class SessionService {
  static final String PREFIX = "engs";

  /** A new session: the cookie secret and CSRF token exist in clear only here. */
  public record SignedIn(
      String secret, String csrfToken, User user, Organization organization, Instant expiresAt) {}

  private final SessionStore sessions;
  private final UserStore users;
  private final OrganizationStore organizations;
  private final Clock clock;
  private final Duration ttl;

  public SessionService(
      SessionStore sessions,
      UserStore users,
      OrganizationStore organizations,
      Clock clock,
      Duration ttl) {
    this.sessions = sessions;
    this.users = users;
    this.organizations = organizations;
    this.clock = clock;
    this.ttl = ttl;
  }

  /**
   * Verifies the password and opens a session. With several organizations using the same email,
   * the caller must name the organization; the error never says whether an email exists.
   */
  public SignedIn signIn(String email, String password, String orgId) {
    List<UserStore.WithPassword> candidates = users.findForSignIn(email).stream()
        .filter(c -> orgId == null || c.user().orgId().equals(orgId))
        .toList();
    if (candidates.size() > 1) {
      throw ApiException.badRequest(
          "organizationId",
          "This email belongs to several organizations; send organizationId to choose one");
    }
    String storedHash = candidates.isEmpty() ? null : candidates.getFirst().passwordHash();
    if (!PasswordHasher.verify(password, storedHash)) {
      throw ApiException.unauthorized("invalid_credentials", "Invalid email or password");
    }
    User user = candidates.getFirst().user();
    Organization org = organizations.find(user.orgId()).orElseThrow();
    Instant now = clock.instant();
    String secret = SecretFormat.generate(PREFIX);
    String csrf = SecretFormat.generate("csrf");
    Instant expiresAt = now.plus(ttl);
    sessions.insert(
        new SessionStore.Session(
            Ids.newId("sess", now.toEpochMilli()),
            user.id(),
            org.id(),
            SecretFormat.hash(csrf),
            expiresAt,
            null),
        SecretFormat.hash(secret),
        now);
    return new SignedIn(secret, csrf, user, org, expiresAt);
  }

  /** Resolves a session cookie to its principal, or fails with 401. */
  public Principal authenticate(String secret) {
    if (!SecretFormat.isWellFormed(PREFIX, secret)) {
      throw expired();
    }
    SessionStore.Session session =
        sessions.findBySecretHash(SecretFormat.hash(secret)).orElseThrow(SessionService::expired);
    if (session.revokedAt() != null || !clock.instant().isBefore(session.expiresAt())) {
      throw expired();
    }
    User user = users.find(session.orgId(), session.userId()).orElseThrow(SessionService::expired);
    Organization org = organizations.find(session.orgId()).orElseThrow(SessionService::expired);
    return new Principal(
        Principal.Kind.SESSION, session.id(), org, Set.of(), null, null, user, session.csrfHash());
  }

  public void signOut(Principal principal) {
    sessions.revoke(principal.credentialId(), clock.instant());
  }

  /** Deletes sessions that ended more than a day ago. */
  public int purgeEnded() {
    return sessions.deleteEndedBefore(clock.instant().minus(Duration.ofDays(1)));
  }

  private static ApiException expired() {
    return ApiException.unauthorized(
        "invalid_session", "The session is missing, expired or signed out; sign in again");
  }
}
