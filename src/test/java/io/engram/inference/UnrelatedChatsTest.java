package io.engram.inference;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Uses do not feed on themselves: an organization's own questions are answered as well after
 * 5,000 chats about other things as before, even when the model parrots whatever memory it is
 * given (the worst case: every block it gets becomes an answer that "used" its first memory). The
 * data set is generated here: people with a city, a job and a pet each, and lunches between them;
 * one question per fact of the first two kinds, recall@5 measured through the memory API as a
 * held-out harness does (uses recorded).
 */
class UnrelatedChatsTest {
  @RegisterExtension
  static final GatewayFixture gateway =
      new GatewayFixture("scale", Map.of("RATE_LIMIT_REQUESTS", "1000000"));

  private static final String[] FIRST = {
    "Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko",
    "Lars", "Maya", "Nikos", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tomas", "Ugo", "Vera",
    "Wim", "Xenia", "Yusuf", "Zoe", "Anouk", "Björn", "Carmen", "Dario"
  };
  private static final String[] LAST = {"Lindqvist", "Okafor", "Moreau", "Tanaka", "Silva"};
  private static final String[] CITIES = {
    "Lisbon", "Oslo", "Porto", "Tallinn", "Ghent", "Turin", "Krakow", "Bergen", "Lyon", "Graz"
  };
  private static final String[] JOBS = {
    "nurse", "carpenter", "pilot", "actuary", "chemist", "librarian", "baker", "geologist"
  };
  private static final String[] PETS = {"parrot", "tortoise", "greyhound", "ferret", "cat"};
  private static final String[] PLACES = {"the harbour cafe", "the ramen bar", "the old market"};
  private static final String[] ELSEWHERE = {
    "How long should I boil an egg for a runny yolk?",
    "What is a good stretch for a stiff lower back?",
    "Write a haiku about autumn rain.",
    "How do I reverse a list in Python?",
    "Explain the offside rule in football.",
    "What's the difference between baking soda and baking powder?",
    "Suggest a name for a sailing boat.",
    "How do I convert Celsius to Fahrenheit?",
    "Inspector says hi",
    "Translate 'good morning' into Italian."
  };

  private record Question(String text, String memoryText) {}

  @Test
  void ownQuestionsAreAnsweredAsWellAfterFiveThousandUnrelatedChats() throws Exception {
    Random random = new Random(42);
    Map<String, String> idOf = new LinkedHashMap<>();
    List<Question> questions = new ArrayList<>();
    List<String> people = new ArrayList<>();
    for (String first : FIRST) {
      for (String last : LAST) {
        people.add(first + " " + last);
      }
    }
    for (String person : people) {
      String city = pick(random, CITIES);
      String job = pick(random, JOBS);
      String moved = person + " moved to " + city + " in " + (2015 + random.nextInt(10)) + ".";
      String works = person + " works as a " + job + " in " + pick(random, CITIES) + ".";
      String pet = person + " has a " + pick(random, PETS) + " called " + pick(random, FIRST) + ".";
      for (String text : List.of(moved, works, pet)) {
        idOf.put(text, remember(text, random));
      }
      questions.add(new Question("Where does " + person + " live now?", moved));
      questions.add(new Question("What does " + person + " do for a living?", works));
    }
    // Memories that compete with the answers: the same people, cities and jobs, other facts.
    String[] everyone = people.toArray(String[]::new);
    for (int i = 0; i < 600; i++) {
      String other = i % 2 == 0
          ? pick(random, everyone) + " visited " + pick(random, CITIES) + " for a "
              + pick(random, JOBS) + "s' conference in " + (2015 + random.nextInt(10)) + "."
          : pick(random, everyone) + " had lunch with " + pick(random, everyone) + " at "
              + pick(random, PLACES) + " and talked about living in " + pick(random, CITIES) + ".";
      idOf.put(other, remember(other, random));
    }
    // Asking records uses; the answers are those of a peek that records none, every time.
    double peeked = recallAt5(questions, idOf, false);
    double before = recallAt5(questions, idOf, true);
    gateway.server.engram.memory().reads().flushUses();
    gateway.server.clock.advance(Duration.ofMinutes(5));
    assertThat(before).as("asked, uses recorded").isEqualTo(peeked);
    assertThat(recallAt5(questions, idOf, true)).as("the same questions again").isEqualTo(before);

    String key = gateway.server.apiKey(gateway.orgId, 1_000_000, "inference");
    gateway.upstream.parrotMemory(true);
    AtomicInteger withMemory = new AtomicInteger();
    try (ExecutorService clients = Executors.newFixedThreadPool(4)) {
      List<Future<?>> chats = new ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        // Two in three share a word with the memories (a city, a job) while asking about
        // something else: some get a block, and the parroting model "uses" its first memory.
        String question = switch (i % 3) {
          case 0 -> "What is the weather like in " + CITIES[i % CITIES.length] + " in spring?";
          case 1 -> "How many hours a week does a " + JOBS[i % JOBS.length] + " usually work?";
          default -> ELSEWHERE[i % ELSEWHERE.length];
        };
        chats.add(clients.submit(() -> {
          gateway.server.clock.advance(Duration.ofSeconds(1));
          Http.Response response =
              gateway.chat(key, GatewayFixture.body(question, "")).send();
          assertThat(response.status()).as(response.text()).isEqualTo(200);
          if (!response.header("X-Engram-Memory-Ids").isEmpty()) {
            withMemory.incrementAndGet();
          }
        }));
      }
      for (Future<?> chat : chats) {
        chat.get();
      }
    } finally {
      gateway.upstream.parrotMemory(false);
    }
    gateway.server.engram.memory().reads().flushUses();
    double after = recallAt5(questions, idOf, true);
    System.out.printf(
        "%d questions: recall@5 before %.3f, after 5,000 unrelated chats (%d with a memory"
            + " block) %.3f%n",
        questions.size(), before, withMemory.get(), after);
    assertThat(withMemory.get())
        .as("chats that got a block and fed answer uses")
        .isPositive();
    assertThat(after).isGreaterThanOrEqualTo(before - 0.005);
  }

  /**
   * A memory of something that happened in the last two years, as a conversation's turns are
   * written: its activation is that of an old use, so a fresh use would weigh on it at once.
   */
  private static String remember(String text, Random random) {
    Instant occurred =
        gateway.server.clock.instant().minus(Duration.ofDays(1 + random.nextInt(730)));
    Http.Response response = gateway
        .server
        .http
        .post("/v1/memory")
        .bearer(gateway.token)
        .json(Json.write(Map.of("text", text, "occurredAt", occurred.toString())))
        .send();
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  private static double recallAt5(
      List<Question> questions, Map<String, String> idOf, boolean recordUse) {
    int found = 0;
    for (Question question : questions) {
      Http.Response response = gateway
          .server
          .http
          .post("/v1/memory/retrieve")
          .bearer(gateway.token)
          .json(Json.write(Map.of("query", question.text(), "limit", 5, "recordUse", recordUse)))
          .send();
      assertThat(response.status()).as(response.text()).isEqualTo(200);
      List<String> ids = new ArrayList<>();
      for (JsonNode memory : response.json().get("memories")) {
        ids.add(memory.get("id").asText());
      }
      if (ids.contains(idOf.get(question.memoryText()))) {
        found++;
      }
    }
    return found / (double) questions.size();
  }

  private static String pick(Random random, String[] from) {
    return from[random.nextInt(from.length)];
  }
}
