package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.instances.storage.ConversationHistory;
import io.engram.instances.storage.StorageUsage;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.platform.Ids;
import io.engram.store.Database;
import io.engram.store.PostgresDatabase;
import io.engram.store.SqliteDatabase;
import io.engram.support.TestDatabases;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A flush of conversation history on a real database, when the database refuses one exchange for
 * what it holds (here a missing model, which the column does not allow): the others of its batch
 * are kept, that one alone is dropped and counted, and the next flush does not try it again; and
 * the organization's storage counts what is kept, no more and no less.
 */
class ConversationHistoryFlushTest {

  @Test
  void anExchangeTheDatabaseRefusesIsDroppedAloneOnSqlite(@TempDir Path dir) {
    try (Database db = new SqliteDatabase(dir.resolve("engram.db"))) {
      onlyTheRefusedExchangeIsDropped(db);
    }
  }

  @Test
  void anExchangeTheDatabaseRefusesIsDroppedAloneOnPostgres() {
    String url = TestDatabases.freshPostgresUrl();
    try (Database db = new PostgresDatabase(url)) {
      onlyTheRefusedExchangeIsDropped(db);
    } finally {
      TestDatabases.drop(url);
    }
  }

  private static void onlyTheRefusedExchangeIsDropped(Database db) {
    Instant now = Instant.now();
    Organization org =
        new Organization(Ids.newId("org", now.toEpochMilli()), "Acme", Plan.SEED, null, now, now);
    new OrganizationStore(db).insert(org);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ConversationHistory history = new ConversationHistory(
        db,
        new InstanceStore(db, Clock.systemUTC()),
        new StorageUsage(db, () -> 0),
        registry,
        Clock.systemUTC());

    for (int i = 0; i < 7; i++) {
      history.record(org, exchange(i == 3 ? null : "m", "answer " + i));
    }
    assertThat(history.flush()).isEqualTo(6);
    assertThat(outcome(registry, "kept")).isEqualTo(6);
    assertThat(outcome(registry, "refused")).isEqualTo(1);

    // Nothing is left to retry: the next flush writes only what came since.
    history.record(org, exchange("m", "later"));
    assertThat(history.flush()).isEqualTo(1);
    assertThat(outcome(registry, "refused")).isEqualTo(1);
    String instance =
        new InstanceStore(db, Clock.systemUTC()).defaultOf(org.id()).id();
    assertThat(history.page(instance, null, 20))
        .extracting(stored -> stored.answered().answer())
        .containsExactlyInAnyOrder(
            "answer 0", "answer 1", "answer 2", "answer 4", "answer 5", "answer 6", "later");

    // The organization's storage reads the totals the database keeps beside the rows: equal to the
    // rows' sum after a batch split by a refusal (its rolled-back halves counted nothing) and after
    // a deletion.
    StorageUsage storage = new StorageUsage(db, () -> 0);
    assertThat(storage.kept(org.id())).isEqualTo(summed(db, org)).isPositive();
    history.delete(instance, history.page(instance, null, 1).getFirst().id());
    assertThat(storage.kept(org.id())).isEqualTo(summed(db, org));
    assertThat(storage.organizationsKeeping()).contains(org.id());
  }

  private static long summed(Database db, Organization org) {
    return db.read(h -> h.createQuery(
            "SELECT COALESCE(SUM(bytes), 0) FROM conversation_exchanges WHERE org_id = :org")
        .bind("org", org.id())
        .mapTo(Long.class)
        .one());
  }

  private static ConversationHistory.Answered exchange(String model, String answer) {
    return new ConversationHistory.Answered(
        "key_1", null, "req_1", model, "[{\"role\":\"user\",\"content\":\"hi\"}]", answer, 1, 2, 0);
  }

  private static double outcome(SimpleMeterRegistry registry, String outcome) {
    return registry
        .get("engram.conversation.history.exchanges")
        .tag("outcome", outcome)
        .counter()
        .count();
  }
}
