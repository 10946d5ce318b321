package io.engram.memory.bench;

import io.engram.memory.ChangeAuthor;
import io.engram.memory.ChangeLog;
import io.engram.memory.Embedder;
import io.engram.memory.MemoryKind;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryState;
import io.engram.memory.MemoryStore;
import io.engram.memory.UseKind;
import io.engram.memory.Validity;
import io.engram.store.SqliteDatabase;
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
 * Usage: SeedMemories <data-dir> <org-id> <count> [seed]
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

  private SeedMemories() {}

  public static void main(String[] args) throws Exception {
    Path dataDir = Path.of(args[0]);
    String org = args[1];
    int count = Integer.parseInt(args[2]);
    Random random = new Random(args.length > 3 ? Long.parseLong(args[3]) : 42);
    Embedder embedder = Embedder.shared(dataDir.resolve("models"));
    Instant now = Instant.now();
    long started = System.nanoTime();
    try (SqliteDatabase database = new SqliteDatabase(dataDir.resolve("engram.db"));
        ExecutorService pool =
            Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors())) {
      MemoryStore store = new MemoryStore(database);
      ChangeLog changeLog = new ChangeLog(database);
      int batch = 512;
      for (int done = 0; done < count; done += batch) {
        int size = Math.min(batch, count - done);
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
        List<Future<List<float[]>>> halves = new ArrayList<>();
        int half = (size + 1) / 2;
        for (int from = 0; from < size; from += half) {
          List<String> texts = items.subList(from, Math.min(size, from + half)).stream()
              .map(item -> item[0] + ": " + item[1])
              .toList();
          halves.add(pool.submit(() -> embedder.embedAll(texts)));
        }
        List<float[]> vectors = new ArrayList<>();
        for (Future<List<float[]>> part : halves) {
          vectors.addAll(part.get());
        }
        List<MemoryRecord> records = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          Instant at = now.minus(Duration.ofMinutes(random.nextInt(60 * 24 * 365)));
          // Half shared by the organization, half across USERS end users; each with a team and a
          // priority in its metadata (for retrieval with a user and a filter,
          // bench/retrieve-bench.sh).
          int n = done + i;
          MemoryRecord.Draft draft = new MemoryRecord.Draft(
              org,
              null,
              n % 2 == 0 ? null : "user-" + (n / 2) % USERS,
              null,
              items.get(i)[1],
              items.get(i)[0],
              KINDS[random.nextInt(KINDS.length)],
              0.5 + random.nextInt(51) / 100.0,
              "{\"team\":\"team-" + (n % 10) + "\",\"priority\":" + (n % 5) + "}",
              Validity.NONE);
          records.add(MemoryRecord.created(
              draft,
              MemoryState.DURABLE,
              MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
              at,
              at,
              vectors.get(i)));
        }
        database.write(h -> {
          for (MemoryRecord record : records) {
            store.insert(h, record);
            store.recordUse(h, record.id(), UseKind.ENCODE, record.createdAt(), null);
            changeLog.append(h, record.id(), record.createdAt());
          }
          return null;
        });
        if ((done / batch) % 20 == 0) {
          System.out.printf(
              "%d memories, %.0f s%n", done + size, (System.nanoTime() - started) / 1e9);
        }
      }
    }
    System.out.printf("seeded %d memories in %.0f s%n", count, (System.nanoTime() - started) / 1e9);
  }
}
