package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.memory.lucene.LuceneMemoryIndex;
import io.engram.organizations.Organization;
import io.engram.organizations.OrganizationStore;
import io.engram.organizations.Plan;
import io.engram.platform.config.EngramConfig;
import io.engram.store.Database;
import io.engram.store.Databases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The neighbours of several hits found with one search of all their windows are exactly those
 * two sorted searches per hit find: the same memories, the same steps, memories of one instant in
 * the order they were written, the hit's own instant left out when its writer gave it no time;
 * also when the windows hold too many memories and each hit is looked up on its own.
 */
class NeighboursRandomizedTest {
  private static final String ORG = "org_neighbours";
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void oneSearchFindsWhatTwoSearchesPerHitFind() throws Exception {
    Random random = new Random(21);
    try (Fixture fixture = new Fixture()) {
      List<MemoryRecord> memories = new ArrayList<>();
      // Clustered in time, many at the same second: sessions of turns and bulk imports.
      for (int i = 0; i < 600; i++) {
        long minute = random.nextInt(8) * 600L + random.nextInt(40);
        Instant at = START.plusSeconds(minute * 60 + random.nextInt(3));
        // Dated by the writer (a session's time) or when written (no time given).
        memories.add(
            fixture.memory(at, random.nextBoolean() ? at : at.plusSeconds(86_400), random));
      }
      // A dense stretch: more than the one search takes, so each hit is looked up on its own.
      for (int i = 0; i < MemorySearch.NEIGHBOURHOOD + 20; i++) {
        Instant at = START.plus(Duration.ofDays(3)).plusSeconds(i / 4);
        memories.add(fixture.memory(at, at.plusSeconds(i % 2 * 60), random));
      }
      MemorySearch search = fixture.open(memories);
      MemorySearch.Filter filter =
          new MemorySearch.Filter(ORG, AgentScope.ORGANIZATION, null, Set.of(), null, null);
      for (int round = 0; round < 60; round++) {
        Map<String, MemorySearch.Lender> lenders = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
          MemoryRecord hit = memories.get(random.nextInt(round % 4 == 0 ? memories.size() : 600));
          lenders.put(hit.id(), MemorySearch.Lender.of(hit));
        }
        int side = 1 + random.nextInt(3);
        Duration window = Duration.ofMinutes(1 + random.nextInt(40));
        Map<String, List<MemorySearch.Near>> together =
            search.neighboursOf(filter, List.copyOf(lenders.values()), side, window);
        assertThat(together.keySet()).containsExactlyElementsOf(lenders.keySet());
        lenders.forEach((id, lender) -> assertThat(together.get(id))
            .as("neighbours of %s, %d a side within %s", lender, side, window)
            .containsExactlyElementsOf(search.neighbours(filter, lender, side, window)));
      }
    }
  }

  /**
   * A session's turns dated with its time are neighbours in the order they were written; facts
   * written without a time are not the neighbours of others written in the same instant.
   */
  @Test
  void oneInstantIsInWriteOrderOnlyWhenItsWriterGaveTheTime() throws Exception {
    Random random = new Random(7);
    try (Fixture fixture = new Fixture()) {
      Instant session = START.plus(Duration.ofDays(10));
      Instant imported = session.plus(Duration.ofDays(1));
      List<MemoryRecord> turns = new ArrayList<>();
      List<MemoryRecord> facts = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        turns.add(fixture.memory(session, session.plusSeconds(3600 + i), random));
      }
      for (int i = 0; i < 5; i++) {
        facts.add(fixture.memory(imported, imported, random));
      }
      List<MemoryRecord> all = new ArrayList<>(turns);
      all.addAll(facts);
      MemorySearch search = fixture.open(all);
      MemorySearch.Filter filter =
          new MemorySearch.Filter(ORG, AgentScope.ORGANIZATION, null, Set.of(), null, null);
      Duration window = Duration.ofMinutes(30);
      MemoryRecord third = turns.get(2);
      List<MemorySearch.Near> expected = List.of(
          new MemorySearch.Near(turns.get(1).id(), 1, false),
          new MemorySearch.Near(turns.get(0).id(), 2, false),
          new MemorySearch.Near(turns.get(3).id(), 1, true),
          new MemorySearch.Near(turns.get(4).id(), 2, true));
      MemorySearch.Lender turn = MemorySearch.Lender.of(third);
      assertThat(turn.dated()).isTrue();
      assertThat(search.neighbours(filter, turn, 2, window)).containsExactlyElementsOf(expected);
      assertThat(search.neighboursOf(filter, List.of(turn), 2, window))
          .containsEntry(third.id(), expected);
      MemoryRecord fact = facts.get(2);
      MemorySearch.Lender undated = MemorySearch.Lender.of(fact);
      assertThat(undated.dated()).isFalse();
      assertThat(search.neighbours(filter, undated, 2, window)).isEmpty();
      assertThat(search.neighboursOf(filter, List.of(undated), 2, window))
          .containsEntry(fact.id(), List.of());
    }
  }

  /** A database with one organization and the index over what it holds. */
  private static final class Fixture implements AutoCloseable {
    final Path dir = Files.createTempDirectory("engram-neighbours");
    final Database database =
        Databases.open(EngramConfig.fromEnvironment(Map.of("ENGRAM_DATA_DIR", dir.toString())));
    final MemoryStores stores = MemoryStores.open(database);
    MemoryIndex index;

    Fixture() throws Exception {
      new OrganizationStore(database)
          .insert(new Organization(ORG, "Neighbours", Plan.GROWTH, null, START, START));
    }

    /** A memory that occurred {@code at}, written {@code written} (its id made then). */
    MemoryRecord memory(Instant at, Instant written, Random random) {
      float[] vector = new float[Embedder.DIMENSIONS];
      double norm = 0;
      for (int i = 0; i < vector.length; i++) {
        vector[i] = (float) random.nextGaussian();
        norm += vector[i] * vector[i];
      }
      for (int i = 0; i < vector.length; i++) {
        vector[i] /= (float) Math.sqrt(norm);
      }
      MemoryRecord.Draft draft = new MemoryRecord.Draft(
          ORG, null, "turn at " + at, "Caroline", MemoryKind.OBSERVATION, 0.8, null);
      return MemoryRecord.created(
          draft,
          MemoryState.DURABLE,
          MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
          at,
          written,
          vector);
    }

    MemorySearch open(List<MemoryRecord> memories) {
      database.write(h -> {
        for (MemoryRecord memory : memories) {
          stores.memories().insert(h, memory);
          stores.changeLog().append(h, memory.id(), memory.createdAt());
        }
        return null;
      });
      index = new LuceneMemoryIndex(
          dir.resolve("index"), stores.memories(), stores.changeLog(), Clock.systemUTC());
      return index.search();
    }

    @Override
    public void close() {
      if (index != null) {
        index.close();
      }
      database.close();
    }
  }
}
