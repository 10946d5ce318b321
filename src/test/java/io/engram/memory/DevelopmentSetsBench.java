package io.engram.memory;

import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Retrieval quality on every memory development set (bench/memory-sets.sh runs it): each
 * conversation in its own organization, through the HTTP API, one memory per turn (the speaker as
 * subject, the turn's time as occurredAt where it has one, its id in metadata); every question
 * asked with the shipped ranking and with BM25 alone; a hit at k is an evidence turn among the top
 * k. A question with {@code before} (RealMem) is asked when only the turns before that one are
 * encoded. Prints and writes target/memory-sets-report.md: hit@5/10/20 per set and per category.
 * A set that is absent is skipped, saying so.
 *
 * <p>Arguments: the sets to run (default all: locomo-dev, realmem, friendsqa, qmsum).
 */
public final class DevelopmentSetsBench {
  static final int[] KS = {5, 10, 20};
  static final int WRITERS = Integer.getInteger("sets.writers", 4);
  static final int ASKERS = Integer.getInteger("sets.askers", 2);

  /** Hits at 5, 10, 20 of the shipped ranking, hits at 10 of BM25 alone, per category. */
  static final class Tally {
    final Map<String, int[]> byCategory = new TreeMap<>();

    void add(
        String category, List<String> shipped, List<String> lexical, java.util.Set<String> ev) {
      int[] counts = byCategory.computeIfAbsent(category, c -> new int[2 + KS.length]);
      counts[0]++;
      for (int k = 0; k < KS.length; k++) {
        if (hit(shipped, ev, KS[k])) {
          counts[1 + k]++;
        }
      }
      if (hit(lexical, ev, 10)) {
        counts[1 + KS.length]++;
      }
    }

    int[] total() {
      int[] sum = new int[2 + KS.length];
      byCategory.values().forEach(c -> {
        for (int i = 0; i < sum.length; i++) {
          sum[i] += c[i];
        }
      });
      return sum;
    }

    private static boolean hit(List<String> ranked, java.util.Set<String> evidence, int k) {
      return ranked.subList(0, Math.min(k, ranked.size())).stream().anyMatch(evidence::contains);
    }
  }

  private DevelopmentSetsBench() {}

  public static void main(String[] args) throws Exception {
    List<String> sets = args.length == 0 ? DevelopmentSets.NAMES : List.of(args);
    StringBuilder report = new StringBuilder();
    for (String set : sets) {
      if (!Files.exists(DevelopmentSets.file(set))) {
        String skipped = "Skipped " + set + ": no data set at "
            + DevelopmentSets.file(set).toAbsolutePath() + " (-Dengram.datasets=<dir> points "
            + "elsewhere)\n";
        System.out.print(skipped);
        report.append(skipped);
        continue;
      }
      long started = System.nanoTime();
      Tally tally = run(DevelopmentSets.read(set));
      String table = table(set, tally, (System.nanoTime() - started) / 1e9);
      System.out.print(table);
      report.append(table);
    }
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/memory-sets-report.md"), report);
  }

  static Tally run(List<DevelopmentSets.Conversation> conversations) throws Exception {
    Tally tally = new Tally();
    try (TestServer server =
        TestServer.builder().env("RATE_LIMIT_REQUESTS", "1000000").start()) {
      for (DevelopmentSets.Conversation conversation : conversations) {
        String org = server.createOrganization("growth");
        Memories memories =
            Memories.of(server, server.token(org, null, "memory:read", "memory:write"));
        Map<String, String> turnByMemory = new ConcurrentHashMap<>();
        Map<String, Integer> position = new HashMap<>();
        for (int i = 0; i < conversation.turns().size(); i++) {
          position.put(conversation.turns().get(i).id(), i);
        }
        // Questions in the order their turn comes (all at the end when they have none).
        List<DevelopmentSets.Question> questions = new ArrayList<>(conversation.questions());
        questions.sort(Comparator.comparingInt(q -> q.before() == null
            ? conversation.turns().size()
            : position.getOrDefault(q.before(), conversation.turns().size())));
        int encoded = 0;
        int from = 0;
        while (from < questions.size()) {
          DevelopmentSets.Question first = questions.get(from);
          int upTo = first.before() == null
              ? conversation.turns().size()
              : position.getOrDefault(first.before(), conversation.turns().size());
          int to = from;
          while (to < questions.size()
              && upTo
                  == (questions.get(to).before() == null
                      ? conversation.turns().size()
                      : position.getOrDefault(
                          questions.get(to).before(), conversation.turns().size()))) {
            to++;
          }
          // The clock first: a turn's time may not be in the server's future.
          server.clock.set(clockAfter(conversation.turns().subList(0, Math.max(1, upTo))));
          encode(memories, conversation.turns().subList(encoded, upTo), turnByMemory);
          encoded = Math.max(encoded, upTo);
          ask(memories, questions.subList(from, to), turnByMemory, tally);
          from = to;
        }
      }
    }
    return tally;
  }

  /** A day after the last turn with a time (questions are asked after the conversation). */
  private static Instant clockAfter(List<DevelopmentSets.Turn> turns) {
    Instant last = null;
    for (DevelopmentSets.Turn turn : turns) {
      if (turn.time() != null && (last == null || turn.time().isAfter(last))) {
        last = turn.time();
      }
    }
    return last == null ? Instant.parse("2026-01-01T00:00:00Z") : last.plus(Duration.ofDays(1));
  }

  private static void encode(
      Memories memories, List<DevelopmentSets.Turn> turns, Map<String, String> turnByMemory)
      throws Exception {
    try (ExecutorService writers = Executors.newFixedThreadPool(WRITERS)) {
      List<Future<?>> writes = new ArrayList<>();
      for (DevelopmentSets.Turn turn : turns) {
        writes.add(writers.submit(() -> {
          Map<String, Object> fields = new LinkedHashMap<>();
          if (!turn.speaker().isBlank()) {
            fields.put("subject", turn.speaker());
          }
          fields.put("memoryKind", "event");
          if (turn.time() != null) {
            fields.put("occurredAt", turn.time().toString());
          }
          fields.put("metadata", Map.of("turnId", turn.id()));
          String text = turn.text().isBlank() ? "(" + turn.speaker() + ")" : turn.text();
          for (String part : parts(text)) {
            turnByMemory.put(memories.remember(part, fields), turn.id());
          }
        }));
      }
      for (Future<?> write : writes) {
        write.get();
      }
    }
  }

  /** A memory holds at most 8,000 characters: a longer turn is kept as several, cut at lines. */
  static List<String> parts(String text) {
    int most = 7_500;
    List<String> parts = new ArrayList<>();
    String rest = text;
    while (rest.length() > most) {
      int cut = rest.lastIndexOf('\n', most);
      if (cut < most / 2) {
        cut = rest.lastIndexOf(' ', most);
      }
      if (cut < most / 2) {
        cut = most;
      }
      parts.add(rest.substring(0, cut).strip());
      rest = rest.substring(cut).strip();
    }
    if (!rest.isEmpty() || parts.isEmpty()) {
      parts.add(rest);
    }
    return parts;
  }

  private static void ask(
      Memories memories,
      List<DevelopmentSets.Question> questions,
      Map<String, String> turnByMemory,
      Tally tally)
      throws Exception {
    try (ExecutorService askers = Executors.newFixedThreadPool(ASKERS)) {
      List<Future<List<List<String>>>> answers = new ArrayList<>();
      for (DevelopmentSets.Question question : questions) {
        answers.add(askers.submit(() -> List.of(
            ranked(memories, question.text(), "hybrid", true, turnByMemory),
            ranked(memories, question.text(), "lexical", false, turnByMemory))));
      }
      for (int i = 0; i < questions.size(); i++) {
        List<List<String>> both = answers.get(i).get();
        DevelopmentSets.Question question = questions.get(i);
        synchronized (tally) {
          tally.add(question.category(), both.get(0), both.get(1), question.evidence());
        }
      }
    }
  }

  private static List<String> ranked(
      Memories memories, String query, String mode, boolean activation, Map<String, String> turns) {
    Http.Response response = memories.retrieve(Json.write(Map.of(
        "query",
        query,
        "limit",
        20,
        "mode",
        mode,
        "useActivation",
        activation,
        "recordUse",
        false)));
    if (response.status() != 200) {
      throw new IllegalStateException(
          "retrieve answered " + response.status() + ": " + response.text());
    }
    List<String> ranked = new ArrayList<>();
    response
        .json()
        .get("memories")
        .forEach(m -> ranked.add(turns.get(m.get("id").asText())));
    return ranked;
  }

  static String table(String set, Tally tally, double seconds) {
    StringBuilder out = new StringBuilder(String.format(
        Locale.ROOT, "%n### %s (%d questions, %.0f s)%n%n", set, tally.total()[0], seconds));
    out.append("| category | questions | hit@5 | hit@10 | hit@20 | BM25 hit@10 |\n");
    out.append("|---|---|---|---|---|---|\n");
    Map<String, int[]> rows = new LinkedHashMap<>(tally.byCategory);
    rows.put("all", tally.total());
    rows.forEach((category, c) -> out.append(String.format(
        Locale.ROOT,
        "| %s | %d | %.3f | %.3f | %.3f | %.3f |%n",
        category,
        c[0],
        c[1] / (double) c[0],
        c[2] / (double) c[0],
        c[3] / (double) c[0],
        c[4] / (double) c[0])));
    return out.toString();
  }
}
