package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Versioned capability sets: history with who/when/before/after, the set in force at a time,
 * If-Match, and concurrent PATCHes that never interleave. Runs on SQLite and on PostgreSQL,
 * whose concurrency differs (one writer versus row-level compare-and-set).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CapabilityHistoryContract {
  TestServer server;
  Assistants key;
  Assistants admin;
  String org;

  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
    org = server.createOrganization("growth");
    key = Assistants.withKey(server, server.apiKey(org, 100_000, "admin"));
    admin = Assistants.as(server, server.signedIn(org, "admin@h.example", "admin"));
  }

  @AfterAll
  void stop() {
    server.close();
  }

  static String orders(int perDay) {
    return "{\"capabilities\":[\"create_orders\"],\"capabilityConfigs\":{\"create_orders\":{\"allowedOrderTypes\":"
        + "[\"purchase\"],\"maxOrdersPerDay\":" + perDay + ",\"requiresApproval\":false}}}";
  }

  @Test
  void historyRecordsWhoChangedWhatAndWhenWithBeforeAndAfter() {
    Instant created = server.clock.instant();
    String id = key.created("Ledger", "org_shared", null);
    server.clock.advance(Duration.ofHours(1));
    Http.Response second = admin.patch(id, orders(10));
    server.clock.advance(Duration.ofHours(1));
    Http.Response third = key.patch(
        id,
        "{\"capabilities\":[\"create_orders\",\"track_orders\"],"
            + "\"capabilityConfigs\":{\"create_orders\":{\"allowedOrderTypes\":[\"purchase\"],\"maxOrdersPerDay\":20,"
            + "\"requiresApproval\":false}}}");
    assertThat(third.status()).as(third.text()).isEqualTo(200);

    JsonNode history = key.history(id, "").json().get("history");
    assertThat(history).hasSize(3);
    JsonNode latest = history.get(0);
    assertThat(latest.get("version").asInt()).isEqualTo(3);
    assertThat(latest.get("changedAt").asText())
        .isEqualTo(created.plus(Duration.ofHours(2)).toString());
    assertThat(latest.at("/changedBy/kind").asText()).isEqualTo("api_key");
    assertThat(latest.get("requestId").asText()).isEqualTo(third.header("X-Request-Id"));
    assertThat(Assistants.ids(latest.get("added"))).containsExactly("track_orders");
    assertThat(Assistants.ids(latest.get("reconfigured"))).containsExactly("create_orders");
    assertThat(
            latest.at("/before/capabilityConfigs/create_orders/maxOrdersPerDay").asInt())
        .isEqualTo(10);
    assertThat(
            latest.at("/after/capabilityConfigs/create_orders/maxOrdersPerDay").asInt())
        .isEqualTo(20);

    JsonNode bySession = history.get(1);
    assertThat(bySession.at("/changedBy/kind").asText()).isEqualTo("session");
    assertThat(bySession.at("/changedBy/userId").asText()).startsWith("user_");
    assertThat(bySession.get("requestId").asText()).isEqualTo(second.header("X-Request-Id"));
    assertThat(Assistants.ids(bySession.get("added"))).containsExactly("create_orders");

    JsonNode first = history.get(2);
    assertThat(first.get("version").asInt()).isEqualTo(1);
    assertThat(first.get("before").isNull()).isTrue();
    assertThat(Assistants.ids(first.at("/after/capabilities"))).containsExactly("answer_questions");

    // A later change that removes a capability says so.
    key.patch(id, "{\"capabilities\":[\"track_orders\"]}");
    JsonNode removal = key.history(id, "?limit=1").json();
    assertThat(Assistants.ids(removal.at("/history/0/removed"))).containsExactly("create_orders");
    assertThat(removal.get("nextBefore").asInt()).isEqualTo(4);
    JsonNode older = key.history(id, "?limit=2&before=4").json();
    assertThat(older
            .get("history")
            .valueStream()
            .map(v -> v.get("version").asInt())
            .toList())
        .containsExactly(3, 2);
    assertThat(key.history(id, "?limit=0").status()).isEqualTo(400);
    assertThat(key.history(id, "?before=abc").status()).isEqualTo(400);
  }

  @Test
  void readersAskWhichSetWasInForceAtAGivenTime() {
    Instant created = server.clock.instant();
    String id = key.created("Timeline", "org_shared", null);
    server.clock.advance(Duration.ofMinutes(10));
    key.patch(id, orders(5));
    server.clock.advance(Duration.ofMinutes(10));
    key.patch(id, orders(6));

    JsonNode early = at(id, created.plus(Duration.ofMinutes(5)).toString());
    assertThat(early.get("version").asInt()).isEqualTo(1);
    assertThat(Assistants.ids(early.get("capabilities"))).containsExactly("answer_questions");
    JsonNode middle = at(id, String.valueOf(created.plus(Duration.ofMinutes(15)).getEpochSecond()));
    assertThat(middle.at("/capabilityConfigs/create_orders/maxOrdersPerDay").asInt())
        .isEqualTo(5);
    assertThat(at(id, server.clock.instant().toString()).get("version").asInt()).isEqualTo(3);

    Http.Response beforeCreation = key.send(
        key.http.get("/api/assistants/" + id + "/capabilities?at=" + created.minusSeconds(60)));
    assertThat(beforeCreation.status()).isEqualTo(404);
    Http.Response badTime =
        key.send(key.http.get("/api/assistants/" + id + "/capabilities?at=yesterday"));
    assertThat(badTime.status()).isEqualTo(400);

    // A conversation as the assistant asks the same question per message: AssistantChatTest.
  }

  private JsonNode at(String id, String time) {
    Http.Response response =
        key.send(key.http.get("/api/assistants/" + id + "/capabilities?at=" + time));
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    return response.json();
  }

  @Test
  void ifMatchRefusesAStaleVersion() {
    String id = key.created("Guarded", "org_shared", null);
    Http.Response read = key.capabilities(id);
    assertThat(read.header("ETag")).isEqualTo("\"1\"");
    Http.Response first = key.send(key.http
        .patch("/api/assistants/" + id + "/capabilities")
        .header("If-Match", "\"1\"")
        .json(orders(1)));
    assertThat(first.status()).isEqualTo(200);
    assertThat(first.header("ETag")).isEqualTo("\"2\"");
    // A second editor still holding version 1 is refused, and nothing changes.
    Http.Response stale = key.send(key.http
        .patch("/api/assistants/" + id + "/capabilities")
        .header("If-Match", "\"1\"")
        .json(orders(99)));
    assertThat(stale.status()).isEqualTo(412);
    assertThat(stale.json().get("success").asBoolean()).isFalse();
    assertThat(stale.json().get("error").asText()).isEqualTo("Precondition failed");
    assertThat(stale.json().get("message").asText()).contains("version 2");
    assertThat(key.capabilities(id)
            .json()
            .at("/capabilityConfigs/create_orders/maxOrdersPerDay")
            .asInt())
        .isEqualTo(1);

    for (String weakOrOther : List.of("W/\"2\"", "\"3\", \"4\"")) {
      assertThat(key.send(key.http
                  .patch("/api/assistants/" + id + "/capabilities")
                  .header("If-Match", weakOrOther)
                  .json(orders(7)))
              .status())
          .isEqualTo(412);
    }
    assertThat(key.send(key.http
                .patch("/api/assistants/" + id + "/capabilities")
                .header("If-Match", "\"9\", \"2\"")
                .json(orders(2)))
            .status())
        .isEqualTo(200);
    assertThat(key.send(key.http
                .patch("/api/assistants/" + id + "/capabilities")
                .header("If-Match", "*")
                .json(orders(3)))
            .status())
        .isEqualTo(200);
    Http.Response malformed = key.send(key.http
        .patch("/api/assistants/" + id + "/capabilities")
        .header("If-Match", "version-4")
        .json(orders(4)));
    assertThat(malformed.status()).isEqualTo(400);
    assertThat(key.capabilities(id).json().get("version").asInt()).isEqualTo(4);
  }

  @Test
  void concurrentPatchesEachLandWholeAndInOrder() throws Exception {
    String id = key.created("Busy", "org_shared", null);
    int writers = 16;
    List<Http.Response> responses = inParallel(writers, i -> key.patch(id, orders(100 + i)));
    assertThat(responses).allSatisfy(r -> assertThat(r.status()).as(r.text()).isEqualTo(200));
    // Every version is exactly one request's set, each request's set is one version.
    JsonNode history = key.history(id, "?limit=100").json().get("history");
    assertThat(history).hasSize(writers + 1);
    Set<Integer> perDay = new HashSet<>();
    for (int v = 0; v < writers; v++) {
      JsonNode after = history.get(v).get("after");
      assertThat(Assistants.ids(after.get("capabilities")))
          .containsExactly("answer_questions", "create_orders");
      assertThat(after.at("/capabilityConfigs/create_orders/allowedOrderTypes").toString())
          .isEqualTo("[\"purchase\"]");
      perDay.add(after.at("/capabilityConfigs/create_orders/maxOrdersPerDay").asInt());
    }
    assertThat(perDay).hasSize(writers);
    JsonNode current = key.capabilities(id).json();
    assertThat(current.get("version").asInt()).isEqualTo(writers + 1);
    assertThat(current.get("capabilityConfigs"))
        .isEqualTo(history.get(0).at("/after/capabilityConfigs"));
  }

  @Test
  void concurrentConditionalPatchesOnOneVersionHaveOneWinner() throws Exception {
    String id = key.created("Contested", "org_shared", null);
    List<Http.Response> responses = inParallel(
        12,
        i -> key.send(key.http
            .patch("/api/assistants/" + id + "/capabilities")
            .header("If-Match", "\"1\"")
            .json(orders(200 + i))));
    assertThat(responses.stream().filter(r -> r.status() == 200)).hasSize(1);
    assertThat(responses.stream().filter(r -> r.status() == 412)).hasSize(11);
    assertThat(key.capabilities(id).json().get("version").asInt()).isEqualTo(2);
  }

  /** One request per writer, all released together. */
  private static List<Http.Response> inParallel(int writers, IntFunction<Http.Response> request)
      throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Http.Response>> futures = new ArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(writers)) {
      for (int i = 0; i < writers; i++) {
        int index = i;
        Callable<Http.Response> call = () -> {
          go.await();
          return request.apply(index);
        };
        futures.add(pool.submit(call));
      }
      go.countDown();
      List<Http.Response> responses = new ArrayList<>();
      for (Future<Http.Response> future : futures) {
        responses.add(future.get());
      }
      return responses;
    }
  }
}
