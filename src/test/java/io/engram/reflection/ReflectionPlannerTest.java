package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.memory.MemoryMaintenance;
import io.engram.support.ServerTest;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A subject too large to compare every pair is walked with nearest neighbours from the index
 * instead; on a small subject the two paths must propose the same changes.
 */
class ReflectionPlannerTest extends ServerTest {

  @Test
  void theNeighbourPathFindsWhatComparingEveryPairFinds() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    org.remember("Oscorp's board meets every quarter", "Oscorp");
    org.remember("Oscorp's board meet every quarter", "Oscorp"); // nearly the same words
    org.remember("Oscorp's plan is Pro", "Oscorp", "memoryKind", "fact");
    org.remember("Oscorp's plan is Enterprise", "Oscorp", "memoryKind", "fact");
    org.remember(
        "Oscorp runs its own data center",
        "Oscorp",
        "occurredAt",
        ReflectionClient.daysAgo(server, 400));
    org.remember("Oscorp hires interns in summer", null);
    org.remember("Oscorp hire interns in summer", null);

    List<String> everyPair = plan(org.org(), ReflectionPlanner.ALL_PAIRS_LIMIT);
    assertThat(everyPair)
        .anyMatch(p -> p.startsWith("merge"))
        .anyMatch(p -> p.startsWith("flag_conflict"))
        .anyMatch(p -> p.startsWith("flag_stale"));
    assertThat(everyPair.stream().filter(p -> p.startsWith("merge"))).hasSize(2);
    assertThat(plan(org.org(), 1)).containsExactlyInAnyOrderElementsOf(everyPair);
  }

  private static List<String> plan(String orgId, int allPairsLimit) {
    MemoryMaintenance memory = server.engram.memory().maintenance();
    ReflectionPlanner.Plan plan = new ReflectionPlanner(
            memory,
            ReflectionSettings.DEFAULTS,
            EnumSet.allOf(ReflectionProcess.class),
            server.clock.instant(),
            Map.of(),
            Map.of(),
            () -> {},
            allPairsLimit)
        .plan(orgId);
    assertThat(plan.examined()).isEqualTo(7);
    return plan.proposals().stream()
        .map(p -> p.change().id() + " " + p.memoryId() + " " + p.relatedMemoryId())
        .toList();
  }
}
