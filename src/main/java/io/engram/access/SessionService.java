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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Signs users in and out of the product UI. A session is an {@code engs_} secret in an HttpOnly
 * cookie plus a CSRF token the UI echoes in {@code X-CSRF-Token} on state-changing requests;
 * both are stored hashed.
 */
public final class SessionService {
  static final String PREFIX = "engs";

  /**
   * A new session: the cookie secret and CSRF token exist in clear only here. {@code
   * organizations} lists where it may switch to (the password matched there at sign-in).
   */
  public record SignedIn(
      String secret,
      String csrfToken,
      User user,
      Organization organization,
      Instant expiresAt,
      List<String> organizations) {}

  /** An organization a signed-in person may switch to, and their role there. */
  public record Membership(Organization organization, User user) {}

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
   * Verifies the password and opens a session. An email may belong to several organizations,
   * each with its own password: the ones where this password matches are the session's to switch
   * between. When it matches in several and the caller named none, the answer (400) lists them,
   * so the person chooses; nothing about an organization is said before the password matched.
   */
  public SignedIn signIn(String email, String password, String orgId) {
    List<UserStore.WithPassword> candidates = users.findForSignIn(email);
    List<User> matched = new ArrayList<>();
    for (UserStore.WithPassword candidate : candidates) {
      if (PasswordHasher.verify(password, candidate.passwordHash())) {
        matched.add(candidate.user());
      }
    }
    if (candidates.isEmpty()) {
      PasswordHasher.verify(password, null); // as long as a wrong password takes
    }
    List<User> eligible =
        matched.stream().filter(u -> orgId == null || u.orgId().equals(orgId)).toList();
    if (eligible.isEmpty()) {
      throw ApiException.unauthorized("invalid_credentials", "Invalid email or password");
    }
    if (eligible.size() > 1) {
      throw new SeveralOrganizations(eligible.stream()
          .map(m -> organizations.find(m.orgId()).orElseThrow())
          .toList());
    }
    User user = eligible.getFirst();
    List<String> reachable = new ArrayList<>(List.of(user.orgId()));
    matched.stream()
        .map(User::orgId)
        .filter(id -> !id.equals(user.orgId()))
        .forEach(reachable::add);
    return open(user, reachable);
  }

  /** Signing in found the password good in several organizations and none was named. */
  public static final class SeveralOrganizations extends RuntimeException {
    private final transient List<Organization> choices;

    SeveralOrganizations(List<Organization> choices) {
      super("This email and password open several organizations; choose one", null, false, false);
      this.choices = choices;
    }

    public List<Organization> choices() {
      return choices;
    }
  }

  /** The organizations this session may switch to, its own first. */
  public List<Membership> memberships(Principal principal) {
    SessionStore.Session session = current(principal);
    // The person's users, read once: one per organization the email belongs to.
    List<User> mine = users.findForSignIn(principal.user().email()).stream()
        .map(UserStore.WithPassword::user)
        .toList();
    List<Membership> found = new ArrayList<>();
    for (String id : session.organizations()) {
      Optional<User> user = mine.stream().filter(u -> u.orgId().equals(id)).findFirst();
      Optional<Organization> org = user.isEmpty() ? Optional.empty() : organizations.find(id);
      if (org.isPresent()) {
        found.add(new Membership(org.get(), user.get()));
      }
    }
    return found;
  }

  /**
   * Moves the person to another of their organizations: a new session there (new secret, new
   * CSRF token), this one signed out. Only an organization the password opened at sign-in.
   */
  public SignedIn switchTo(Principal principal, String orgId) {
    SessionStore.Session session = current(principal);
    Membership target = memberships(principal).stream()
        .filter(m -> m.organization().id().equals(orgId))
        .findFirst()
        .orElseThrow(() -> ApiException.notFound(
            "organization_not_found",
            "organizationId",
            "You cannot switch to organization '" + orgId + "'; sign in to it instead"));
    List<String> reachable = new ArrayList<>(List.of(orgId));
    session.organizations().stream().filter(id -> !id.equals(orgId)).forEach(reachable::add);
    sessions.revoke(session.id(), clock.instant());
    return open(target.user(), reachable);
  }

  private SessionStore.Session current(Principal principal) {
    return sessions.findById(principal.credentialId()).orElseThrow(SessionService::expired);
  }

  private SignedIn open(User user, List<String> reachable) {
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
            null,
            List.copyOf(reachable)),
        SecretFormat.hash(secret),
        now);
    return new SignedIn(secret, csrf, user, org, expiresAt, List.copyOf(reachable));
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
