package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

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
}
