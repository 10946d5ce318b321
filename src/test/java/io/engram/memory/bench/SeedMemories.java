package io.engram.memory.bench;

import io.engram.memory.ChangeAuthor;
import io.engram.memory.ChangeLog;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryHistory;
import io.engram.memory.MemoryKind;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryState;
import io.engram.memory.MemoryStore;
import io.engram.memory.UseKind;
import io.engram.memory.Validity;
import io.engram.store.SqliteDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Benchmark set-up, not a test: writes N durable memories into an organization of a stopped
 * server's SQLite database, as encode would (embedding, use, transition, change log), from a
 * seeded generator of business-like sentences. Then the server is started on that data directory.
 * Usage: SeedMemories <data-dir> <org-id or file of ids> <count> [seed] (see {@link #main}).
 */
public final class SeedMemories {
  /** How many end users the half of the memories that is not shared is spread across. */
  static final int USERS = 10_000;

  static final String[] SUBJECTS = {
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Stark Industries",
    "Wayne Enterprises",
    "Wonka",
    "Soylent",
    "Tyrell",
    "Cyberdyne",
    "Aperture",
    "Massive Dynamic",
    "Vandelay",
    "Pied Piper",
    "Dunder Mifflin",
    "Prestige Worldwide",
    "Gringotts",
    "Monarch",
    "Oscorp"
  };
  static final String[] PEOPLE = {
    "Dana", "Priya", "Omar", "Lena", "Kofi", "Mei", "Sven", "Ana", "Tariq", "Noor", "Hugo", "Ines",
    "Raj", "Yuki", "Carlos", "Fatima", "Jonas", "Aiko", "Marta", "Tom"
  };
  static final String[] VERBS = {
    "prefers",
    "asked about",
    "complained about",
    "renewed",
    "cancelled",
    "upgraded",
    "is evaluating",
    "signed off on",
    "needs approval for",
    "reported a problem with",
    "wants a discount on",
    "scheduled a review of",
    "migrated",
    "paused",
    "expanded"
  };
  static final String[] OBJECTS = {
    "the enterprise plan",
    "invoices in euros",
    "the data export feature",
    "single sign-on",
    "weekly status calls",
    "the mobile app",
    "the analytics dashboard",
    "the API rate limits",
    "on-site training",
    "the support contract",
    "the audit log",
    "two-factor authentication",
    "the Salesforce integration",
    "quarterly business reviews",
    "the onboarding checklist",
    "GDPR data requests",
    "the staging environment",
    "purchase order approvals",
    "the renewal terms",
    "the security questionnaire"
  };
  static final String[] WHEN = {
    "last week",
    "in March",
    "before the holidays",
    "after the outage",
    "during the quarterly review",
    "yesterday",
    "at the kickoff call",
    "in the last board meeting",
    "since the price change",
    "this morning"
  };
  static final MemoryKind[] KINDS = {
    MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.EVENT, MemoryKind.OBSERVATION
  };

  /** How many distinct texts (and vectors) memories spread over many organizations draw from. */
  static final int POOL = 100_000;

  private SeedMemories() {}

  /**
   * Usage: SeedMemories data-dir org count [seed], where org is an organization's id or a file of
   * ids, one a line: the memories then go to them in turn, each organization drawing distinct
   * texts from a pool of {@link #POOL} embedded once (a vector that another organization already
   * holds gets a little noise, so no two memories of the index share one exactly).
   */
  public static void main(String[] args) throws Exception {
    Path dataDir = Path.of(args[0]);
    List<String> orgs = Files.isRegularFile(Path.of(args[1]))
        ? Files.readAllLines(Path.of(args[1])).stream()
            .filter(line -> !line.isBlank())
            .toList()
        : List.of(args[1]);
    int count = Integer.parseInt(args[2]);
    Random random = new Random(args.length > 3 ? Long.parseLong(args[3]) : 42);
    Embedder embedder = Embedder.shared(dataDir.resolve("models"));
    long started = System.nanoTime();
    try (SqliteDatabase database = new SqliteDatabase(dataDir.resolve("engram.db"));
        ExecutorService pool =
            Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors())) {
      Seeder seeder = new Seeder(
          database,
          new MemoryStore(database),
          new MemoryHistory(database),
          new ChangeLog(database),
          embedder,
          pool,
          random,
          started);
      if (orgs.size() == 1) {
        seeder.seedOne(orgs.get(0), count);
      } else {
        seeder.seedMany(orgs, count);
      }
    }
    System.out.printf("seeded %d memories in %.0f s%n", count, (System.nanoTime() - started) / 1e9);
  }

  /** One seeding run: what it writes with, and its generator. */
  private record Seeder(
      SqliteDatabase database,
      MemoryStore store,
      MemoryHistory history,
      ChangeLog changeLog,
      Embedder embedder,
      ExecutorService pool,
      Random random,
      long started) {
    private static final int BATCH = 512;

    /** Every memory a text and an embedding of its own, in one organization. */
    void seedOne(String org, int count) throws Exception {
      Instant now = Instant.now();
      for (int done = 0; done < count; done += BATCH) {
        List<String[]> items = items(Math.min(BATCH, count - done));
        List<float[]> vectors = embed(items);
        List<MemoryRecord> records = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
          records.add(record(org, done + i, items.get(i), vectors.get(i), now));
        }
        write(records, done);
      }
    }

    /** Memories dealt to the organizations in turn, texts and vectors drawn from the pool. */
    void seedMany(List<String> orgs, int count) throws Exception {
      Instant now = Instant.now();
      int size = Math.min(count, POOL);
      List<String[]> items = items(size);
      List<float[]> vectors = new ArrayList<>(size);
      for (int from = 0; from < size; from += BATCH) {
        vectors.addAll(embed(items.subList(from, Math.min(size, from + BATCH))));
      }
      System.out.printf("pool of %d embedded, %.0f s%n", size, (System.nanoTime() - started) / 1e9);
      boolean[] taken = new boolean[size];
      for (int done = 0; done < count; done += BATCH) {
        List<MemoryRecord> records = new ArrayList<>();
        for (int n = done; n < Math.min(count, done + BATCH); n++) {
          int org = n % orgs.size();
          // A stride prime to the pool's size: one organization's draws are distinct.
          int drawn = (int) (((long) (n / orgs.size()) * 100_003L + org * 7_919L) % size);
          float[] vector = taken[drawn] ? nudged(vectors.get(drawn)) : vectors.get(drawn);
          taken[drawn] = true;
          records.add(record(orgs.get(org), n, items.get(drawn), vector, now));
        }
        write(records, done);
      }
    }

    private List<String[]> items(int size) {
      List<String[]> items = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        String subject = SUBJECTS[random.nextInt(SUBJECTS.length)];
        String text = PEOPLE[random.nextInt(PEOPLE.length)] + " from " + subject + " "
            + VERBS[random.nextInt(VERBS.length)] + " " + OBJECTS[random.nextInt(OBJECTS.length)]
            + " "
            + WHEN[random.nextInt(WHEN.length)] + " (ticket " + (10_000 + random.nextInt(90_000))
            + ").";
        items.add(new String[] {subject, text});
      }
      return items;
    }

    private List<float[]> embed(List<String[]> items) throws Exception {
      List<Future<List<float[]>>> halves = new ArrayList<>();
      int half = (items.size() + 1) / 2;
      for (int from = 0; from < items.size(); from += half) {
        List<String> texts = items.subList(from, Math.min(items.size(), from + half)).stream()
            .map(item -> item[0] + ": " + item[1])
            .toList();
        halves.add(pool.submit(() -> embedder.embedAll(texts)));
      }
      List<float[]> vectors = new ArrayList<>();
      for (Future<List<float[]>> part : halves) {
        vectors.addAll(part.get());
      }
      return vectors;
    }

    /** The vector moved by noise of about a tenth of its length, and normalized again. */
    private float[] nudged(float[] vector) {
      float[] moved = new float[vector.length];
      double norm = 0;
      for (int i = 0; i < vector.length; i++) {
        moved[i] = vector[i] + (float) (random.nextGaussian() * 0.005);
        norm += moved[i] * moved[i];
      }
      float scale = (float) (1 / Math.sqrt(norm));
      for (int i = 0; i < moved.length; i++) {
        moved[i] *= scale;
      }
      return moved;
    }

    private MemoryRecord record(String org, int n, String[] item, float[] vector, Instant now) {
      Instant at = now.minus(Duration.ofMinutes(random.nextInt(60 * 24 * 365)));
      // Half shared by the organization, half across USERS end users; each with a team and a
      // priority in its metadata (for retrieval with a user and a filter,
      // bench/retrieve-bench.sh).
      MemoryRecord.Draft draft = new MemoryRecord.Draft(
          org,
          null,
          n % 2 == 0 ? null : "user-" + (n / 2) % USERS,
          null,
          item[1],
          item[0],
          KINDS[random.nextInt(KINDS.length)],
          0.5 + random.nextInt(51) / 100.0,
          "{\"team\":\"team-" + (n % 10) + "\",\"priority\":" + (n % 5) + "}",
          Validity.NONE);
      return MemoryRecord.created(
          draft,
          MemoryState.DURABLE,
          MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
          at,
          at,
          vector);
    }

    private void write(List<MemoryRecord> records, int done) {
      database.write(h -> {
        for (MemoryRecord record : records) {
          store.insert(h, record);
          history.recordUse(h, record.id(), UseKind.ENCODE, record.createdAt(), null);
          changeLog.append(h, record.id(), record.createdAt());
        }
        return null;
      });
      if ((done / BATCH) % 20 == 0) {
        System.out.printf(
            "%d memories, %.0f s%n", done + records.size(), (System.nanoTime() - started) / 1e9);
      }
    }
  }
}
