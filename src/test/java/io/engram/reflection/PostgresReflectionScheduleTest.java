package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one PostgreSQL database driving the schedule at the same moment: every due
 * organization gets exactly one run. A node that never ran anything (as after a restart) reads the
 * schedule from the database and does not run an organization again before its interval.
 */
class PostgresReflectionScheduleTest {

  @Test
  void twoNodesTickingTogetherStartExactlyOneRunPerOrganization() throws Exception {
    try (TestServer a = TestServer.builder().postgres().start();
        TestServer b = TestServer.builder().sharing(a).start()) {
      List<ReflectionClient> orgs = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        ReflectionClient org = ReflectionClient.create(a, "growth");
        org.remember("Massive Dynamic renewal number " + i + " is in October", "Massive Dynamic");
        orgs.add(org);
      }
      for (int round = 0; round < 3; round++) {
        CyclicBarrier together = new CyclicBarrier(2);
        CompletableFuture<List<ReflectionRun>> onA =
            CompletableFuture.supplyAsync(() -> tick(a, together));
        CompletableFuture<List<ReflectionRun>> onB =
            CompletableFuture.supplyAsync(() -> tick(b, together));
        List<ReflectionRun> started = new ArrayList<>(onA.get());
        started.addAll(onB.get());
        for (ReflectionClient org : orgs) {
          List<ReflectionRun> runs =
              started.stream().filter(r -> r.orgId().equals(org.org())).toList();
          assertThat(runs).as("round " + round).hasSize(1);
          org.awaitAudit(runs.getFirst().id());
        }
        // Neither node starts anything more until the interval has passed.
        assertThat(a.engram.reflection().tick()).isEmpty();
        assertThat(b.engram.reflection().tick()).isEmpty();
        a.clock.advance(Duration.ofDays(1));
      }
      for (ReflectionClient org : orgs) {
        Long runs = a.engram
            .services()
            .database()
            .read(h -> h.createQuery("SELECT COUNT(*) FROM reflection_runs WHERE org_id = :org")
                .bind("org", org.org())
                .mapTo(Long.class)
                .one());
        assertThat(runs).isEqualTo(3);
      }
    }
  }

  private static List<ReflectionRun> tick(TestServer node, CyclicBarrier together) {
    try {
      together.await();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return node.engram.reflection().tick();
  }
}
