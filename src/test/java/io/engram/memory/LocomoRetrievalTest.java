package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Retrieval quality on the LoCoMo development subset (../shared/datasets/locomo-dev), through the
 * HTTP API: each conversation in its own organization, one memory per turn (the speaker as subject,
 * the session date as occurredAt, the clock the day after the last session), then every question
 * of categories 1-4 asked in four rankings. A hit at k is an evidence turn among the top k.
 * Writes target/locomo-report.md and checks the shipped ranking beats both single modes at
 * recall@10. Skips, saying why, where the data set is absent.
 */
class LocomoRetrievalTest {
  static final Path DATASET =
      Path.of(System.getProperty("engram.locomo", "../shared/datasets/locomo-dev/locomo-dev.json"));
  static final int[] KS = {5, 10, 20};

  /** One ranking under comparison: the request fields that select it. */
  record Ranking(String name, String mode, boolean activation) {}

  static final List<Ranking> RANKINGS = List.of(
      new Ranking("BM25 only", "lexical", false),
      new Ranking("vector only", "vector", false),
      new Ranking("hybrid", "hybrid", false),
      new Ranking("hybrid + activation (shipped)", "hybrid", true));

  @Test
  void shippedRankingBeatsBothSingleModes() throws IOException {
    Assumptions.assumeTrue(
        Files.exists(DATASET),
        "LoCoMo data set not found at " + DATASET.toAbsolutePath()
            + "; this benchmark needs ../shared/datasets/locomo-dev (set -Dengram.locomo=<file> to point elsewhere)");
    JsonNode conversations = Json.MAPPER.readTree(DATASET.toFile());
    Map<String, Map<Integer, int[]>> hits = new LinkedHashMap<>();
    Map<Integer, Integer> questions = new TreeMap<>();
    // Shipped ranking per conversation: questions, hits at 5, 10, 20.
    Map<String, int[]> byConversation = new LinkedHashMap<>();
    List<Long> latenciesMicros = new ArrayList<>();
    long turns = 0;
    long encodeNanos = 0;
    try (TestServer server =
        TestServer.builder().env("RATE_LIMIT_REQUESTS", "1000000").start()) {
      for (JsonNode sample : conversations) {
        String org = server.createOrganization("growth");
        Memories memories =
            Memories.of(server, server.token(org, null, "memory:read", "memory:write"));
        JsonNode conversation = sample.get("conversation");
        Instant last = Instant.EPOCH;
        List<JsonNode> sessionTurns = new ArrayList<>();
        List<Instant> sessionDates = new ArrayList<>();
        for (int session = 1; conversation.has("session_" + session); session++) {
          Instant date = DevelopmentSets.locomoDate(
              conversation.get("session_" + session + "_date_time").asText());
          last = date.isAfter(last) ? date : last;
          for (JsonNode turn : conversation.get("session_" + session)) {
            sessionTurns.add(turn);
            sessionDates.add(date);
          }
        }
        server.clock.set(last.plus(Duration.ofDays(1)));
        Map<String, String> diaByMemory = new ConcurrentHashMap<>();
        long started = System.nanoTime();
        try (ExecutorService writers = Executors.newFixedThreadPool(4)) {
          List<Future<?>> writes = new ArrayList<>();
          for (int i = 0; i < sessionTurns.size(); i++) {
            JsonNode turn = sessionTurns.get(i);
            Instant date = sessionDates.get(i);
            writes.add(writers.submit(() -> {
              String text = turn.get("text").asText()
                  + (turn.has("blip_caption")
                      ? " [shares " + turn.get("blip_caption").asText() + "]"
                      : "");
              String id = memories.remember(
                  text,
                  Map.of(
                      "subject",
                      turn.get("speaker").asText(),
                      "memoryKind",
                      "event",
                      "occurredAt",
                      date.plusSeconds(turnIndex(turn)).toString(),
                      "metadata",
                      Map.of("diaId", turn.get("dia_id").asText())));
              diaByMemory.put(id, turn.get("dia_id").asText());
            }));
          }
          for (Future<?> write : writes) {
            write.get();
          }
        } catch (java.util.concurrent.ExecutionException e) {
          throw new AssertionError(e.getCause());
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
        encodeNanos += System.nanoTime() - started;
        turns += sessionTurns.size();
        List<JsonNode> asked = new ArrayList<>();
        sample.get("qa").forEach(qa -> {
          if (qa.get("category").asInt() != 5) {
            asked.add(qa);
          }
        });
        List<List<Answer>> answers = ask(memories, asked);
        for (int q = 0; q < asked.size(); q++) {
          JsonNode qa = asked.get(q);
          int category = qa.get("category").asInt();
          questions.merge(category, 1, Integer::sum);
          Set<String> evidence = new java.util.HashSet<>();
          qa.get("evidence").forEach(e -> evidence.add(e.asText()));
          for (int r = 0; r < RANKINGS.size(); r++) {
            Ranking ranking = RANKINGS.get(r);
            Http.Response response = answers.get(q).get(r).response();
            if (ranking.activation()) {
              latenciesMicros.add(answers.get(q).get(r).micros());
            }
            assertThat(response.status()).as(response.text()).isEqualTo(200);
            List<String> ranked = new ArrayList<>();
            response
                .json()
                .get("memories")
                .forEach(m -> ranked.add(diaByMemory.get(m.get("id").asText())));
            if (ranking.activation() && MISSES != null) {
              recordMiss(qa, category, evidence, ranked, sessionTurns);
            }
            if (ranking.activation()) {
              int[] conv = byConversation.computeIfAbsent(
                  sample.get("sample_id").asText(), id -> new int[1 + KS.length]);
              conv[0]++;
              for (int k = 0; k < KS.length; k++) {
                if (ranked.subList(0, Math.min(KS[k], ranked.size())).stream()
                    .anyMatch(evidence::contains)) {
                  conv[1 + k]++;
                }
              }
            }
            int[] counts = hits.computeIfAbsent(ranking.name(), n -> new TreeMap<>())
                .computeIfAbsent(category, c -> new int[KS.length]);
            for (int k = 0; k < KS.length; k++) {
              if (ranked.subList(0, Math.min(KS[k], ranked.size())).stream()
                  .anyMatch(evidence::contains)) {
                counts[k]++;
              }
            }
          }
        }
      }
    }
    String report = report(hits, questions, latenciesMicros, turns, encodeNanos)
        + perConversation(byConversation);
    Files.createDirectories(Path.of("target"));
    Files.writeString(Path.of("target/locomo-report.md"), report);
    System.out.println(report);
    double shipped = recallAt10(hits, questions, RANKINGS.get(3).name());
    assertThat(shipped)
        .as("shipped ranking vs BM25 only")
        .isGreaterThan(recallAt10(hits, questions, "BM25 only"));
    assertThat(shipped)
        .as("shipped ranking vs vector only")
        .isGreaterThan(recallAt10(hits, questions, "vector only"));
    assertThat(shipped).as("shipped recall@10").isGreaterThanOrEqualTo(0.83);
  }

  /**
   * Questions asked at once: {@code -Dlocomo.concurrency=N} asks N at a time, as concurrent chats
   * would (their embeddings then share calls to the model); 1 by default.
   */
  static final int CONCURRENCY = Integer.getInteger("locomo.concurrency", 1);

  /** One answer and how long it took. */
  record Answer(Http.Response response, long micros) {}

  /** Every question in every ranking, {@link #CONCURRENCY} at a time; answers in question order. */
  private static List<List<Answer>> ask(Memories memories, List<JsonNode> asked) {
    try (ExecutorService askers = Executors.newFixedThreadPool(CONCURRENCY)) {
      List<List<Future<Answer>>> pending = new ArrayList<>();
      for (JsonNode qa : asked) {
        List<Future<Answer>> perRanking = new ArrayList<>();
        for (Ranking ranking : RANKINGS) {
          perRanking.add(askers.submit(() -> {
            long started = System.nanoTime();
            Http.Response response = memories.retrieve(Json.write(Map.of(
                "query",
                qa.get("question").asText(),
                "limit",
                20,
                "mode",
                ranking.mode(),
                "useActivation",
                ranking.activation(),
                "recordUse",
                false)));
            return new Answer(response, (System.nanoTime() - started) / 1000);
          }));
        }
        pending.add(perRanking);
      }
      List<List<Answer>> answers = new ArrayList<>();
      for (List<Future<Answer>> perRanking : pending) {
        List<Answer> got = new ArrayList<>();
        for (Future<Answer> answer : perRanking) {
          got.add(answer.get());
        }
        answers.add(got);
      }
      return answers;
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError(e.getCause());
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * With {@code -Dlocomo.misses=<file>}, each question of the shipped ranking whose evidence is not
   * in its top 10 is written there: the question, its evidence turns with their rank (-1: not in
   * the top 20) and the top 3, to read what the ranking missed.
   */
  static final Path MISSES = System.getProperty("locomo.misses") == null
      ? null
      : Path.of(System.getProperty("locomo.misses"));

  static void recordMiss(
      JsonNode qa, int category, Set<String> evidence, List<String> ranked, List<JsonNode> turns) {
    if (ranked.subList(0, Math.min(10, ranked.size())).stream().anyMatch(evidence::contains)) {
      return;
    }
    Map<String, JsonNode> byDia = new java.util.HashMap<>();
    turns.forEach(t -> byDia.put(t.get("dia_id").asText(), t));
    StringBuilder miss =
        new StringBuilder("MISS c" + category + " " + qa.get("question").asText() + "\n");
    for (String dia : evidence) {
      miss.append("  EVID ")
          .append(dia)
          .append(" rank ")
          .append(ranked.indexOf(dia))
          .append(' ')
          .append(said(byDia.get(dia)))
          .append('\n');
    }
    for (int r = 0; r < Math.min(3, ranked.size()); r++) {
      miss.append("  TOP")
          .append(r)
          .append(' ')
          .append(ranked.get(r))
          .append(' ')
          .append(said(byDia.get(ranked.get(r))))
          .append('\n');
    }
    try {
      Files.writeString(
          MISSES,
          miss,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String said(JsonNode turn) {
    return turn == null
        ? "?"
        : turn.get("speaker").asText() + ": " + turn.get("text").asText();
  }

  /** The turn's place in its session (D3:7 is 7): turns are a second apart, in order. */
  static long turnIndex(JsonNode turn) {
    String dia = turn.get("dia_id").asText();
    return Long.parseLong(dia.substring(dia.indexOf(':') + 1).strip());
  }

  static String perConversation(Map<String, int[]> byConversation) {
    StringBuilder out = new StringBuilder(
        "\n| Conversation (shipped) | questions | recall@5 | recall@10 | recall@20 |\n|---|---|---|---|---|\n");
    byConversation.forEach((id, c) -> out.append(String.format(
        Locale.ROOT,
        "| %s | %d | %.3f | %.3f | %.3f |%n",
        id,
        c[0],
        c[1] / (double) c[0],
        c[2] / (double) c[0],
        c[3] / (double) c[0])));
    return out.toString();
  }

  static double recallAt10(
      Map<String, Map<Integer, int[]>> hits, Map<Integer, Integer> questions, String ranking) {
    int total = questions.values().stream().mapToInt(Integer::intValue).sum();
    return hits.get(ranking).values().stream().mapToInt(c -> c[1]).sum() / (double) total;
  }

  static String report(
      Map<String, Map<Integer, int[]>> hits,
      Map<Integer, Integer> questions,
      List<Long> latenciesMicros,
      long turns,
      long encodeNanos) {
    int total = questions.values().stream().mapToInt(Integer::intValue).sum();
    StringBuilder out =
        new StringBuilder("LoCoMo dev: " + turns + " turns encoded in " + encodeNanos / 1_000_000
            + " ms; " + total + " questions (categories 1-4: " + questions + ")\n\n");
    out.append(
        "| Ranking | recall@5 | recall@10 | recall@20 | r@10 cat 1 | cat 2 | cat 3 | cat 4 |\n");
    out.append("|---|---|---|---|---|---|---|---|\n");
    hits.forEach((ranking, byCategory) -> {
      out.append("| ").append(ranking);
      for (int k = 0; k < KS.length; k++) {
        final int index = k;
        out.append(String.format(
            Locale.ROOT,
            " | %.3f",
            byCategory.values().stream().mapToInt(c -> c[index]).sum() / (double) total));
      }
      questions.forEach((category, count) -> out.append(String.format(
          Locale.ROOT,
          " | %.3f",
          byCategory.getOrDefault(category, new int[KS.length])[1] / (double) count)));
      out.append(" |\n");
    });
    long[] sorted = latenciesMicros.stream().mapToLong(Long::longValue).sorted().toArray();
    out.append(String.format(
        Locale.ROOT,
        "%nShipped retrieval latency over HTTP (limit 20): p50 %.2f ms, p99 %.2f ms%n",
        sorted[sorted.length / 2] / 1000.0,
        sorted[(int) (sorted.length * 0.99)] / 1000.0));
    return out.toString();
  }
}
