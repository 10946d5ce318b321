package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one PostgreSQL database, each with its own index: a write on one becomes
 * retrievable on the other by following the change log, and a suppression there disappears too.
 */
class PostgresMultiNodeMemoryTest {

  static void eventually(Supplier<Boolean> condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.get()) {
      assertThat(System.nanoTime()).as(what).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  @Test
  void aWriteOnOneNodeIsRetrievableOnTheOther() throws InterruptedException {
    try (TestServer first = TestServer.builder().postgres().start();
        TestServer second = TestServer.builder().sharing(first).start()) {
      String org = first.createOrganization("growth");
      String token = first.token(org, null, "memory:read", "memory:write", "memory:control");
      Memories onFirst = Memories.of(first, token);
      Memories onSecond = Memories.of(second, token);
      String id = onFirst.remember("The warehouse in Lyon closes at six on Fridays");
      assertThat(onFirst.ids("When does the Lyon warehouse close?", 5)).contains(id);
      eventually(
          () -> onSecond.ids("When does the Lyon warehouse close?", 5).contains(id),
          "seen on the second node");

      assertThat(onSecond.control(id, "suppress", null).status()).isEqualTo(200);
      eventually(
          () -> !onFirst.ids("When does the Lyon warehouse close?", 5).contains(id),
          "suppression seen on the first node");
      List<String> onBoth = onSecond.ids("Lyon warehouse", 5);
      assertThat(onBoth).doesNotContain(id);
    }
  }

  /**
   * The second node keeps the rows it retrieved; an edit on the first reaches it with the change
   * log, and the row goes before the index takes the new text: whenever the second node finds the
   * memory by a word only the edit wrote (lexically: a vector search finds the only memory for any
   * question), it shows the edited text, never the kept one.
   */
  @Test
  void anEditOnOneNodeIsWhatTheOtherRetrievesOnceItFindsIt() throws InterruptedException {
    try (TestServer first = TestServer.builder().postgres().start();
        TestServer second = TestServer.builder().sharing(first).start()) {
      String org = first.createOrganization("growth");
      String token = first.token(org, null, "memory:read", "memory:write");
      Memories onFirst = Memories.of(first, token);
      Memories onSecond = Memories.of(second, token);
      String id = onFirst.remember("The Lyon warehouse keeps spare pallets in bay four");
      eventually(
          () -> onSecond.ids("Where are the spare pallets kept?", 5).contains(id),
          "seen (and kept) on the second node");
      assertThat(onFirst
              .send(
                  "PATCH",
                  "/" + id,
                  "{\"text\":\"The Lyon warehouse keeps spare pallets in" + " the mezzanine\"}")
              .status())
          .isEqualTo(200);
      eventually(
          () -> {
            Http.Response found =
                onSecond.retrieve("{\"query\":\"mezzanine\",\"mode\":\"lexical\",\"limit\":5}");
            assertThat(found.status()).as(found.text()).isEqualTo(200);
            for (JsonNode memory : found.json().get("memories")) {
              if (memory.get("id").asText().equals(id)) {
                assertThat(memory.get("text").asText()).contains("mezzanine");
                return true;
              }
            }
            return false;
          },
          "the edit found on the second node");
    }
  }
}
