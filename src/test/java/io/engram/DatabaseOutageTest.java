package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TcpProxy;
import io.engram.support.TestDatabases;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL taken away under eight writers (every connection dropped, new ones refused, as a
 * restart does) and brought back: every request meanwhile answers 503 with {@code Retry-After}
 * (never a 500), at once rather than after a pool's timeout; readiness says not ready within a
 * second; the service writes again within a second or so of the database; and every acknowledged
 * write is there afterwards.
 */
class DatabaseOutageTest {
  private static final int WRITERS = 8;

  @Test
  void aLostDatabaseIsA503AtOnceAndTheServiceIsBackWithTheDatabase() throws Exception {
    String url = TestDatabases.freshPostgresUrl();
    try (TcpProxy proxy = new TcpProxy("127.0.0.1", 5432);
        TestServer server = TestServer.builder()
            .env("DATABASE_URL", url.replace("127.0.0.1:5432", "127.0.0.1:" + proxy.port()))
            .env("RATE_LIMIT_REQUESTS", "1000000")
            .start()) {
      String org = server.createOrganization("growth");
      String token = server.token(org, null, "memory:write", "memory:read");
      Set<String> acknowledged = ConcurrentHashMap.newKeySet();
      List<String> unexpected = new CopyOnWriteArrayList<>();
      List<Long> refusedMillis = new CopyOnWriteArrayList<>();
      AtomicInteger refusals = new AtomicInteger();
      AtomicBoolean writing = new AtomicBoolean(true);
      AtomicInteger serial = new AtomicInteger();
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        writers.add(Thread.ofVirtual().start(() -> {
          while (writing.get()) {
            long started = System.nanoTime();
            Http.Response written = server
                .http
                .post("/v1/memory")
                .bearer(token)
                .json(Json.write(Map.of("text", "Write " + serial.incrementAndGet())))
                .send();
            if (written.status() == 201) {
              acknowledged.add(written.json().get("id").asText());
            } else if (written.status() == 503
                && written.header("Retry-After") != null
                && written.json().at("/error/code").asText().equals("database_unavailable")) {
              refusals.incrementAndGet();
              refusedMillis.add((System.nanoTime() - started) / 1_000_000);
              sleep(20);
            } else {
              unexpected.add(written.status() + " " + written.text());
            }
          }
        }));
      }
      sleep(1000);
      int before = acknowledged.size();
      assertThat(before).as("writes before the outage").isPositive();

      proxy.cut();
      long readyFrom = System.nanoTime();
      Http.Response ready = server.http.get("/v1/health/ready").send();
      long readyMillis = (System.nanoTime() - readyFrom) / 1_000_000;
      sleep(3000);
      Http.Response stillAway = server.http.get("/v1/health/ready").send();

      proxy.restore();
      long back = System.nanoTime();
      Http.Response after;
      do {
        after = server
            .http
            .post("/v1/memory")
            .bearer(token)
            .json("{\"text\":\"After the outage\"}")
            .send();
      } while (after.status() != 201 && System.nanoTime() - back < 10_000_000_000L && sleep(50));
      long backMillis = (System.nanoTime() - back) / 1_000_000;
      sleep(500);
      writing.set(false);
      for (Thread writer : writers) {
        writer.join();
      }

      System.out.printf(
          "OUTAGE: ready %d ms, back %d ms, refusals %d, median refusal %d ms%n",
          readyMillis,
          backMillis,
          refusals.get(),
          refusedMillis.stream().sorted().toList().get(refusedMillis.size() / 2));
      assertThat(unexpected).as("answers other than 201 and 503").isEmpty();
      assertThat(refusals.get()).as("writes refused during the outage").isPositive();
      assertThat(ready.status()).isEqualTo(503);
      assertThat(readyMillis).as("readiness answered within a second").isLessThan(1000);
      assertThat(stillAway.status()).isEqualTo(503);
      assertThat(after.status()).as(after.text()).isEqualTo(201);
      assertThat(backMillis).as("writes again soon after the database").isLessThan(1500);
      // Refused at once: most refusals do not wait for the pool's timeout.
      List<Long> sorted = refusedMillis.stream().sorted().toList();
      assertThat(sorted.get(sorted.size() / 2)).as("median refusal, ms").isLessThan(500);
      Http.Response readyAgain = server.http.get("/v1/health/ready").send();
      assertThat(readyAgain.status()).as("ready again: " + readyAgain.text()).isEqualTo(200);
      // Nothing acknowledged was lost.
      for (String id : acknowledged) {
        Http.Response memory = server.http.get("/v1/memory/" + id).bearer(token).send();
        assertThat(memory.status()).as(id + " " + memory.text()).isEqualTo(200);
      }
    } finally {
      TestDatabases.drop(url);
    }
  }

  private static boolean sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }
}
