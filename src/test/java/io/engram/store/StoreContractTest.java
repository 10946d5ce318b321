package io.engram.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.access.Credential;
import io.engram.access.CredentialKind;
import io.engram.access.CredentialStore;
import io.engram.access.SessionStore;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.organizations.Role;
import io.engram.organizations.User;
import io.engram.organizations.UserStore;
import io.engram.platform.Ids;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The behaviour every store must have, run against each database (see the subclasses). */
abstract class StoreContractTest {
  private static final Instant NOW = Instant.parse("2030-01-01T10:00:00Z");

  Database db;
  OrganizationStore organizations;
  UserStore users;
  CredentialStore credentials;
  SessionStore sessions;

  abstract Database open();

  abstract void cleanUp();

  @BeforeEach
  void setUp() {
    db = open();
    organizations = new OrganizationStore(db);
    users = new UserStore(db);
    credentials = new CredentialStore(db);
    sessions = new SessionStore(db);
  }

  @AfterEach
  void tearDown() {
    if (db != null) {
      db.close();
      cleanUp();
    }
  }

  /** One node holds a lease while it renews it; another takes it only once it lapsed. */
  @Test
  void aLeaseIsHeldByOneNodeUntilItLapses() {
    io.engram.support.MutableClock clock = new io.engram.support.MutableClock(NOW);
    Leases first = new Leases(db, clock);
    Leases second = new Leases(db, clock);
    java.time.Duration held = java.time.Duration.ofSeconds(45);
    assertThat(first.hold("alerts.evaluation", held)).isTrue();
    assertThat(second.hold("alerts.evaluation", held)).isFalse();
    clock.advance(java.time.Duration.ofSeconds(30));
    assertThat(first.hold("alerts.evaluation", held)).isTrue(); // renewed
    clock.advance(java.time.Duration.ofSeconds(30));
    assertThat(second.hold("alerts.evaluation", held)).isFalse();
    assertThat(second.hold("another.lease", held)).isTrue();
    clock.advance(java.time.Duration.ofSeconds(50)); // the first stopped renewing
    assertThat(second.hold("alerts.evaluation", held)).isTrue();
    assertThat(first.hold("alerts.evaluation", held)).isFalse();
  }

  private Organization organization(String name, Plan plan) {
    Organization org =
        new Organization(Ids.newId("org", NOW.toEpochMilli()), name, plan, null, NOW, NOW);
    organizations.insert(org);
    return org;
  }

  @Test
  void organizationsRoundTripAndListInCreationOrder() {
    Organization first = organization("First", Plan.SEED);
    Organization second = organization("Second – ünïcode 組織", Plan.DEDICATED);
    assertThat(organizations.find(first.id())).hasValue(first);
    assertThat(organizations.find(second.id()).orElseThrow().name())
        .isEqualTo("Second – ünïcode 組織");
    assertThat(organizations.find("org_missing")).isEmpty();
    assertThat(organizations.list(null, 10))
        .extracting(Organization::id)
        .containsSubsequence(first.id(), second.id());
    assertThat(organizations.list(first.id(), 10))
        .extracting(Organization::id)
        .doesNotContain(first.id());
    assertThat(db.isReachable()).isTrue();
  }

  @Test
  void usersAreUniquePerOrganizationByEmail() {
    Organization a = organization("A", Plan.FREE);
    Organization b = organization("B", Plan.FREE);
    User alice = new User(
        Ids.newId("user", NOW.toEpochMilli()),
        a.id(),
        "alice@example.com",
        "Alice",
        Role.OWNER,
        NOW);
    assertThat(users.insert(alice, "hash")).isTrue();
    User again = new User(
        Ids.newId("user", NOW.toEpochMilli()),
        a.id(),
        "alice@example.com",
        "Alice 2",
        Role.MEMBER,
        NOW);
    assertThat(users.insert(again, null)).isFalse();
    User elsewhere = new User(
        Ids.newId("user", NOW.toEpochMilli()),
        b.id(),
        "alice@example.com",
        "Alice",
        Role.MEMBER,
        NOW);
    assertThat(users.insert(elsewhere, null)).isTrue();
    assertThat(users.find(a.id(), alice.id())).hasValue(alice);
    assertThat(users.find(b.id(), alice.id())).isEmpty();
    assertThat(users.list(a.id())).containsExactly(alice);
    assertThat(users.findForSignIn("alice@example.com"))
        .hasSize(2)
        .anySatisfy(u -> assertThat(u.passwordHash()).isEqualTo("hash"));
  }

  @Test
  void credentialsAreFoundByHashScopedByOrganizationAndRevokedOnce() {
    Organization a = organization("A", Plan.SEED);
    Organization b = organization("B", Plan.SEED);
    Credential token = new Credential(
        Ids.newId("tok", NOW.toEpochMilli()),
        CredentialKind.CONTEXT_TOKEN,
        a.id(),
        "t",
        "engc_...abcd",
        Set.of("memory:read", "inference:chat"),
        List.of("sales", "support"),
        null,
        "op",
        NOW,
        NOW.plus(1, ChronoUnit.DAYS),
        null,
        List.of("chat-a", "chat-b"));
    credentials.insert(token, "hash-1");
    Credential key = new Credential(
        Ids.newId("key", NOW.toEpochMilli()),
        CredentialKind.API_KEY,
        a.id(),
        "k",
        "engk_...wxyz",
        Set.of("admin"),
        null,
        42,
        "op",
        NOW,
        null,
        null,
        null);
    credentials.insert(key, "hash-2");
    Credential account = new Credential(
        Ids.newId("acct", NOW.toEpochMilli()),
        CredentialKind.ACCOUNT_KEY,
        null,
        "ops",
        "enga_...0000",
        Set.of(),
        null,
        null,
        "op",
        NOW,
        null,
        null,
        null);
    credentials.insert(account, "hash-3");

    assertThat(credentials.findBySecretHash("hash-1")).hasValue(token);
    assertThat(credentials.findBySecretHash("hash-2").orElseThrow().rateLimit()).isEqualTo(42);
    assertThat(credentials.findBySecretHash("nope")).isEmpty();
    assertThat(credentials.find(CredentialKind.CONTEXT_TOKEN, b.id(), token.id()))
        .isEmpty();
    assertThat(credentials.find(CredentialKind.API_KEY, a.id(), token.id())).isEmpty();
    assertThat(credentials.list(CredentialKind.CONTEXT_TOKEN, a.id())).containsExactly(token);
    assertThat(credentials.list(CredentialKind.ACCOUNT_KEY, null)).containsExactly(account);
    assertThat(credentials.countActiveAccountKeys(NOW)).isEqualTo(1);

    Instant revokedAt = NOW.plusSeconds(60);
    assertThat(credentials
            .revoke(CredentialKind.CONTEXT_TOKEN, a.id(), token.id(), revokedAt)
            .orElseThrow()
            .revokedAt())
        .isEqualTo(revokedAt);
    assertThat(credentials
            .revoke(CredentialKind.CONTEXT_TOKEN, a.id(), token.id(), revokedAt.plusSeconds(5))
            .orElseThrow()
            .revokedAt())
        .as("the first revocation time is kept")
        .isEqualTo(revokedAt);
    assertThat(credentials.revoke(CredentialKind.CONTEXT_TOKEN, b.id(), token.id(), revokedAt))
        .isEmpty();
    credentials.revoke(CredentialKind.ACCOUNT_KEY, null, account.id(), revokedAt);
    assertThat(credentials.countActiveAccountKeys(NOW)).isZero();
  }

  @Test
  void aRoleChangeNeverLeavesAnOrganizationWithoutAnOwner() {
    Organization org = organization("Roles", Plan.SEED);
    User first = new User("user_r1", org.id(), "r1@example.com", "R1", Role.OWNER, NOW);
    User second = new User("user_r2", org.id(), "r2@example.com", "R2", Role.MEMBER, NOW);
    users.insert(first, null);
    users.insert(second, null);
    assertThat(users.changeRole(org.id(), "user_r1", Role.ADMIN, true))
        .isEqualTo(UserStore.RoleChange.LAST_OWNER);
    assertThat(users.changeRole(org.id(), "user_nope", Role.ADMIN, true))
        .isEqualTo(UserStore.RoleChange.NOT_FOUND);
    assertThat(users.changeRole(org.id(), "user_r2", Role.OWNER, true))
        .isEqualTo(UserStore.RoleChange.CHANGED);
    assertThat(users.changeRole(org.id(), "user_r1", Role.MEMBER, true))
        .isEqualTo(UserStore.RoleChange.CHANGED);
    assertThat(users.find(org.id(), "user_r1").orElseThrow().role()).isEqualTo(Role.MEMBER);
    assertThat(users.changeRole(org.id(), "user_r2", Role.MEMBER, true))
        .isEqualTo(UserStore.RoleChange.LAST_OWNER);
    // Without the right to change owners: an owner's role and the owner role stay out of reach.
    assertThat(users.changeRole(org.id(), "user_r2", Role.ADMIN, false))
        .isEqualTo(UserStore.RoleChange.OWNERS_ONLY);
    assertThat(users.changeRole(org.id(), "user_r1", Role.OWNER, false))
        .isEqualTo(UserStore.RoleChange.OWNERS_ONLY);
    assertThat(users.changeRole(org.id(), "user_r1", Role.ADMIN, false))
        .isEqualTo(UserStore.RoleChange.CHANGED);
  }

  @Test
  void sessionsRoundTripRevokeAndPurge() {
    Organization a = organization("A", Plan.SPARK);
    User user = new User(
        Ids.newId("user", NOW.toEpochMilli()), a.id(), "u@example.com", "U", Role.MEMBER, NOW);
    users.insert(user, null);
    SessionStore.Session session = new SessionStore.Session(
        "sess_1",
        user.id(),
        a.id(),
        "csrf-hash",
        NOW.plusSeconds(3600),
        null,
        List.of(a.id(), "org_b"));
    sessions.insert(session, "secret-hash", NOW);
    assertThat(sessions.findBySecretHash("secret-hash")).hasValue(session);
    assertThat(sessions.findById("sess_1")).hasValue(session);
    sessions.revoke("sess_1", NOW.plusSeconds(10));
    assertThat(sessions.findBySecretHash("secret-hash").orElseThrow().revokedAt())
        .isEqualTo(NOW.plusSeconds(10));
    assertThat(sessions.deleteEndedBefore(NOW)).isZero();
    assertThat(sessions.deleteEndedBefore(NOW.plusSeconds(20))).isEqualTo(1);
    assertThat(sessions.findBySecretHash("secret-hash")).isEmpty();
  }

  @Test
  void concurrentInsertsOfOneEmailCreateExactlyOneUser() throws Exception {
    Organization org = organization("Race", Plan.SEED);
    List<Future<Boolean>> inserts = new ArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
      for (int i = 0; i < 16; i++) {
        inserts.add(pool.submit(() -> users.insert(
            new User(
                Ids.newId("user", NOW.toEpochMilli()),
                org.id(),
                "same@example.com",
                "Same",
                Role.MEMBER,
                NOW),
            null)));
      }
      int created = 0;
      for (Future<Boolean> insert : inserts) {
        created += insert.get() ? 1 : 0;
      }
      assertThat(created).isEqualTo(1);
    }
    assertThat(users.list(org.id())).hasSize(1);
  }

  @Test
  void concurrentWritesAllLand() throws Exception {
    Organization org = organization("Busy", Plan.GROWTH);
    List<Future<?>> writes = new ArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
      for (int i = 0; i < 200; i++) {
        int n = i;
        writes.add(pool.submit(() -> users.insert(
            new User(
                Ids.newId("user", NOW.toEpochMilli()),
                org.id(),
                "user" + n + "@example.com",
                "U" + n,
                Role.MEMBER,
                NOW),
            null)));
      }
      for (Future<?> write : writes) {
        write.get();
      }
    }
    assertThat(users.list(org.id())).hasSize(200);
  }

  @Test
  void aFailedTransactionLeavesNothingBehind() {
    Organization org = organization("Atomic", Plan.SEED);
    try {
      db.write(h -> {
        h.createUpdate("UPDATE organizations SET name = 'changed' WHERE id = :id")
            .bind("id", org.id())
            .execute();
        throw new IllegalStateException("boom");
      });
    } catch (IllegalStateException expected) {
      // the transaction must roll back
    }
    assertThat(organizations.find(org.id()).orElseThrow().name()).isEqualTo("Atomic");
  }
}
