package io.engram.memory;

import com.fasterxml.jackson.databind.JsonNode;
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
  /** Where to write every question's retrieved memories (-Dsets.dump), or null. */
  static final Path DUMP = System.getProperty("sets.dump", "").isBlank()
      ? null
      : Path.of(System.getProperty("sets.dump"));

  static final int DUMPED = 30;

  /**
   * Where to write every question's candidate pool with the ranking's inputs (-Dsets.pool), or
   * null: what bench/ranking-fit.py re-ranks to choose the ranking's constants with one data set
   * left out, without running the sets again for each value.
   */
  static final Path POOL = System.getProperty("sets.pool", "").isBlank()
      ? null
      : Path.of(System.getProperty("sets.pool"));

  /** The pool asked for: the most a retrieval returns (its candidates are those of 300 hits). */
  static final int POOLED = RetrievalRequest.MAX_LIMIT;
  /**
   * -Dsets.recordUse=true asks as a client would, every retrieval recorded as a use, and
   * -Dsets.shuffle=SEED asks each group of questions in an order of that seed: the same data in
   * any order must give the same figures.
   */
  static final boolean RECORD_USE = Boolean.getBoolean("sets.recordUse");

  static final long SHUFFLE = Long.getLong("sets.shuffle", 0);

  /** -Dsets.twice=true writes every turn twice: the store must hold each once, recall unchanged. */
  static final boolean TWICE = Boolean.getBoolean("sets.twice");

  /** The server's time when the questions are asked (blank: a day after the last turn). */
  static final String CLOCK = System.getProperty("sets.clock", "");
  /** The set being run, named in each dumped line. */
  private static volatile String dumping = "";
  /** Questions of another conversation asked of each one when dumping. */
  static final int FOREIGN = 60;

  /** Hits at 5, 10, 20 of the shipped ranking, hits at 10 of BM25 alone, per category. */
  static final class Tally {
    final Map<String, int[]> byCategory = new TreeMap<>();
    /** The memories the conversations' organizations hold at the end (every state). */
    long memories;

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
      // A memory may stand for several turns that said the same (an encode of what a memory
      // already says reinforces it): their ids, space-separated.
      return ranked.subList(0, Math.min(k, ranked.size())).stream()
          .filter(java.util.Objects::nonNull)
          .flatMap(turns -> java.util.Arrays.stream(turns.split(" ")))
          .anyMatch(evidence::contains);
    }
  }

  private DevelopmentSetsBench() {}

  /** The Solr cluster the sets are indexed in with -Dsets.index=solr; null: the embedded index. */
  private static io.engram.support.SolrCluster solr;

  public static void main(String[] args) throws Exception {
    if ("solr".equals(System.getProperty("sets.index", "lucene"))) {
      solr = io.engram.support.SolrCluster.start(2);
      Runtime.getRuntime().addShutdownHook(new Thread(solr::close));
    }
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
      dumping = set;
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
    TestServer.Builder builder = TestServer.builder().env("RATE_LIMIT_REQUESTS", "1000000");
    if (solr != null) {
      // The same retrieval on the Solr index (-Dsets.index=solr): a two-node SolrCloud, a
      // collection per run.
      builder
          .env("ENGRAM_MEMORY_INDEX", "solr")
          .env("ENGRAM_SOLR_URL", solr.urls())
          .env("ENGRAM_SOLR_COLLECTION", "sets-" + System.nanoTime());
    }
    try (TestServer server = builder.start()) {
      for (int c = 0; c < conversations.size(); c++) {
        DevelopmentSets.Conversation conversation = conversations.get(c);
        String org = server.createOrganization("growth");
        Memories memories =
            Memories.of(server, server.token(org, null, "memory:read", "memory:write"));
        Map<String, String> turnByMemory = new ConcurrentHashMap<>();
        Map<String, Object[]> timeline = new ConcurrentHashMap<>();
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
          if (TWICE) {
            // Every turn written again: each must come back as the memory it already is.
            encode(memories, conversation.turns().subList(encoded, upTo), turnByMemory);
          }
          for (int t = encoded; t < upTo; t++) {
            DevelopmentSets.Turn turn = conversation.turns().get(t);
            timeline.put(turn.id(), new Object[] {
              t,
              turn.time() == null ? null : turn.time().toEpochMilli(),
              turn.text().contains("?")
            });
          }
          encoded = Math.max(encoded, upTo);
          List<DevelopmentSets.Question> asked = new ArrayList<>(questions.subList(from, to));
          if (SHUFFLE != 0) {
            java.util.Collections.shuffle(asked, new java.util.Random(SHUFFLE + from));
          }
          ask(memories, conversation.id(), asked, turnByMemory, tally);
          if (POOL != null) {
            for (DevelopmentSets.Question question : asked) {
              pool(memories, conversation.id(), question, upTo, turnByMemory);
            }
          }
          from = to;
        }
        tally.memories += server
            .engram
            .services()
            .database()
            .read(h -> h.createQuery("SELECT COUNT(*) FROM memories WHERE org_id = :org")
                .bind("org", org)
                .mapTo(Long.class)
                .one());
        if (POOL != null) {
          write(
              POOL,
              Map.of("set", dumping, "conversation", conversation.id(), "timeline", timeline));
        }
        if (DUMP != null && conversations.size() > 1) {
          // Questions about another conversation: what a chat unrelated to these memories gets.
          List<DevelopmentSets.Question> foreign =
              conversations.get((c + 1) % conversations.size()).questions();
          foreign = foreign.subList(0, Math.min(FOREIGN, foreign.size()));
          try (ExecutorService askers = Executors.newFixedThreadPool(ASKERS)) {
            List<Future<?>> asked = new ArrayList<>();
            for (DevelopmentSets.Question question : foreign) {
              asked.add(askers.submit(() -> dump(
                  conversation.id(),
                  question,
                  true,
                  retrieve(memories, question.text(), "hybrid", true, DUMPED),
                  turnByMemory)));
            }
            for (Future<?> done : asked) {
              done.get();
            }
          }
        }
      }
    }
    return tally;
  }

  /** A day after the last turn with a time (questions are asked after the conversation). */
  private static Instant clockAfter(List<DevelopmentSets.Turn> turns) {
    if (!CLOCK.isBlank()) {
      // -Dsets.clock=2026-11-27T00:00:00Z: the questions asked long after the conversation, as a
      // server with a real clock answers a conversation of years ago.
      return Instant.parse(CLOCK);
    }
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
            turnByMemory.merge(
                memories.rememberOrReinforce(part, fields),
                turn.id(),
                (a, b) -> (" " + a + " ").contains(" " + b + " ") ? a : a + " " + b);
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
      String conversation,
      List<DevelopmentSets.Question> questions,
      Map<String, String> turnByMemory,
      Tally tally)
      throws Exception {
    try (ExecutorService askers = Executors.newFixedThreadPool(ASKERS)) {
      List<Future<List<List<String>>>> answers = new ArrayList<>();
      for (DevelopmentSets.Question question : questions) {
        answers.add(askers.submit(() -> {
          JsonNode shipped =
              retrieve(memories, question.text(), "hybrid", true, DUMP == null ? 20 : DUMPED);
          dump(conversation, question, false, shipped, turnByMemory);
          return List.of(
              turns(shipped, turnByMemory),
              turns(retrieve(memories, question.text(), "lexical", false, 20), turnByMemory));
        }));
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

  private static JsonNode retrieve(
      Memories memories, String query, String mode, boolean activation, int limit) {
    Http.Response response = memories.retrieve(Json.write(Map.of(
        "query",
        query,
        "limit",
        limit,
        "mode",
        mode,
        "useActivation",
        activation,
        "recordUse",
        RECORD_USE)));
    if (response.status() != 200) {
      throw new IllegalStateException(
          "retrieve answered " + response.status() + ": " + response.text());
    }
    return response.json().get("memories");
  }

  /** The turns of the first 20 memories retrieved, best first. */
  private static List<String> turns(JsonNode memories, Map<String, String> turnByMemory) {
    List<String> ranked = new ArrayList<>();
    for (int i = 0; i < Math.min(20, memories.size()); i++) {
      ranked.add(turnByMemory.get(memories.get(i).get("id").asText()));
    }
    return ranked;
  }

  /**
   * With -Dsets.dump=FILE, one JSON line per question: its evidence and reference answer, and the
   * first {@value #DUMPED} memories retrieved with their score, similarity, tokens as a context
   * line and (the first ten) their text: what choosing the chat's memory block is studied on.
   */
  private static void dump(
      String conversation,
      DevelopmentSets.Question question,
      boolean foreign,
      JsonNode memories,
      Map<String, String> turnByMemory) {
    if (DUMP == null) {
      return;
    }
    List<Map<String, Object>> top = new ArrayList<>();
    for (int i = 0; i < memories.size(); i++) {
      JsonNode m = memories.get(i);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("turn", turnByMemory.get(m.get("id").asText()));
      row.put("score", m.get("score").asDouble());
      row.put("similarity", m.at("/explanation/vector/similarity").asDouble(0));
      row.put("relevance", m.at("/explanation/relevance").asDouble());
      row.put(
          "tokens",
          io.engram.platform.TokenCounter.count("- [event | "
              + m.path("subject").asText("") + " | 2023-01-01] " + m.get("text").asText() + "\n"));
      if (i < 10) {
        row.put("text", m.get("text").asText());
      }
      top.add(row);
    }
    Map<String, Object> line = questionLine(conversation, question);
    line.put("foreign", foreign);
    line.put("query", question.text());
    line.put("answer", question.answer());
    line.put("evidence", foreign ? List.of() : List.copyOf(question.evidence()));
    line.put("top", top);
    write(DUMP, line);
  }

  /** A dumped line's first fields: which set, conversation and question it is about. */
  private static Map<String, Object> questionLine(
      String conversation, DevelopmentSets.Question question) {
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("set", dumping);
    line.put("conversation", conversation);
    line.put("question", question.id());
    line.put("category", question.category());
    return line;
  }

  /** One JSON line appended to a dump. */
  private static void write(Path file, Map<String, Object> line) {
    synchronized (file) {
      try {
        Files.writeString(
            file,
            Json.write(line) + "\n",
            java.nio.file.StandardOpenOption.CREATE,
            java.nio.file.StandardOpenOption.APPEND);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /**
   * With -Dsets.pool=FILE, one JSON line per question: its evidence, how many turns were encoded
   * when it was asked, and its {@value #POOLED} best memories with every input of their score
   * (ranks, BM25, similarity, the boosts' matches, activation, confidence, whether the memory asks
   * something): bench/ranking-fit.py ranks them again with other constants. Each conversation's
   * turns follow in one line (position, time, whether it asks), for the neighbours in time.
   */
  private static void pool(
      Memories memories,
      String conversation,
      DevelopmentSets.Question question,
      int encoded,
      Map<String, String> turnByMemory) {
    JsonNode ranked = retrieve(memories, question.text(), "hybrid", true, POOLED);
    List<Map<String, Object>> rows = new ArrayList<>();
    for (JsonNode m : ranked) {
      JsonNode e = m.get("explanation");
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("turn", turnByMemory.get(m.get("id").asText()));
      row.put("lr", e.at("/lexical/rank").isNumber() ? e.at("/lexical/rank").asInt() : null);
      row.put("bm25", e.at("/lexical/bm25").asDouble(0));
      row.put("vr", e.at("/vector/rank").isNumber() ? e.at("/vector/rank").asInt() : null);
      row.put("sim", e.at("/vector/similarity").asDouble(0));
      row.put("s", e.get("subjectMatch").asBoolean());
      row.put("t", e.get("timeMatch").asBoolean());
      row.put("a", e.get("answerMatch").asBoolean());
      row.put("act", e.at("/activation/normalized").asDouble());
      row.put("conf", e.get("confidence").asDouble());
      row.put("chars", m.get("text").asText().length());
      rows.add(row);
    }
    Map<String, Object> line = questionLine(conversation, question);
    line.put("encoded", encoded);
    line.put("evidence", List.copyOf(question.evidence()));
    line.put("rows", rows);
    write(POOL, line);
  }

  static String table(String set, Tally tally, double seconds) {
    StringBuilder out = new StringBuilder(String.format(
        Locale.ROOT,
        "%n### %s (%d questions, %d memories held%s, %.0f s)%n%n",
        set,
        tally.total()[0],
        tally.memories,
        TWICE ? ", every turn written twice" : "",
        seconds));
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
