package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.ServerTest;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every metrics route agrees with counts computed directly from the tables. */
class ReflectionMetricsTest extends ServerTest {
  static ReflectionClient org;

  @BeforeAll
  static void organizationWithHistory() {
    org = ReflectionClient.create(server, "growth");
    org.remember("Vandelay imports latex", "Vandelay");
    org.remember("Vandelay import latex", "Vandelay"); // nearly the same words
    org.remember(
        "Vandelay exports chips",
        "Vandelay",
        "occurredAt",
        ReflectionClient.daysAgo(server, 300),
        "confidence",
        0.3);
    org.remember("Vandelay's plan is Pro", "Vandelay", "memoryKind", "fact");
    org.remember("Vandelay's plan is Enterprise", "Vandelay", "memoryKind", "fact");
    String gone = org.remember("Vandelay's office is in Queens", "Vandelay");
    org.control(gone, "suppress");
    org.run(true);
    JsonNode applied = org.run(false);
    org.undoEvent(org.changes(applied, "flag_stale").getFirst().get("id").asText());
  }

  static long sql(String query) {
    return server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery(query).bind("org", org.org()).mapTo(Long.class).one());
  }

  @Test
  void currentMetricsMatchTheTables() {
    JsonNode metrics = org.get("/metrics").json().get("metrics");
    for (String state : new String[] {"candidate", "durable", "suppressed", "tombstoned"}) {
      assertThat(metrics.at("/memories/byState/" + state).asLong())
          .as(state)
          .isEqualTo(
              sql("SELECT COUNT(*) FROM memories WHERE org_id = :org AND state = '" + state + "'"));
    }
    assertThat(metrics.at("/memories/total").asLong())
        .isEqualTo(sql("SELECT COUNT(*) FROM memories WHERE org_id = :org"));
    assertThat(metrics.at("/openFlags/stale").asLong())
        .isEqualTo(
            sql("SELECT COUNT(*) FROM reflection_flags WHERE org_id = :org AND kind = 'stale'"));
    assertThat(metrics.at("/openFlags/conflicts").asLong())
        .isEqualTo(1)
        .isEqualTo(
            sql("SELECT COUNT(*) FROM reflection_flags WHERE org_id = :org AND kind = 'conflict'")
                / 2);
    assertThat(metrics.at("/runs/total").asLong())
        .isEqualTo(2)
        .isEqualTo(sql("SELECT COUNT(*) FROM reflection_runs WHERE org_id = :org"));
    assertThat(metrics.at("/runs/dryRuns").asLong()).isEqualTo(1);
    assertThat(metrics.at("/runs/memoriesExamined").asLong())
        .isEqualTo(sql("SELECT SUM(examined) FROM reflection_runs WHERE org_id = :org"));
    assertThat(metrics.at("/changes/undone").asLong())
        .isEqualTo(1)
        .isEqualTo(
            sql(
                "SELECT COUNT(*) FROM reflection_events WHERE org_id = :org AND undone_at IS NOT NULL"));
    assertThat(countsOf(metrics.at("/changes/applied")))
        .isEqualTo(eventCounts("applied"))
        .containsKeys("merge", "flag_conflict", "flag_stale");
    assertThat(countsOf(metrics.at("/changes/proposed"))).isEqualTo(eventCounts("proposed"));
  }

  @Test
  void summaryAndTrendAddUpToTheEvents() {
    JsonNode summary = org.get("/metrics/summary?window=7d").json().get("summary");
    assertThat(summary.get("window").asText()).isEqualTo("7d");
    assertThat(countsOf(summary.at("/changes/applied"))).isEqualTo(eventCounts("applied"));
    assertThat(summary.at("/runs/completed").asLong()).isEqualTo(2);
    JsonNode trend = org.get("/metrics/trend?window=2d&bucket=6h").json().get("trend");
    assertThat(trend.get("series")).hasSize(8);
    long applied = 0;
    long runs = 0;
    for (JsonNode point : trend.get("series")) {
      applied += point.get("applied").asLong();
      runs += point.get("runs").asLong();
    }
    assertThat(applied)
        .isEqualTo(sql("SELECT COUNT(*) FROM reflection_events WHERE org_id = :org"
            + " AND outcome = 'applied'"));
    assertThat(runs).isEqualTo(2);
    assertThat(org.get("/metrics/summary?window=1h")
            .json()
            .at("/summary/runs/total")
            .asLong())
        .isEqualTo(2);
  }

  @Test
  void distributionHistogramsCoverEveryMemoryInTheState() {
    JsonNode durable = org.get("/metrics/distribution").json().get("distribution");
    long count = sql("SELECT COUNT(*) FROM memories WHERE org_id = :org AND state = 'durable'");
    assertThat(durable.get("count").asLong()).isEqualTo(count);
    for (String histogram : new String[] {"activation", "confidence", "ageDays"}) {
      long sum = 0;
      for (JsonNode bin : durable.get(histogram)) {
        sum += bin.get("count").asLong();
      }
      assertThat(sum).as(histogram).isEqualTo(count);
    }
    // The one memory first used 300 days ago, with confidence 0.3, sits in the bins that say so:
    // a single encode 300 days ago has normalized activation 0.13. All were stored today.
    assertThat(durable.at("/confidence/3/count").asLong())
        .as(durable.toString())
        .isEqualTo(1);
    assertThat(durable.at("/activation/1/count").asLong())
        .as(durable.toString())
        .isEqualTo(1);
    assertThat(durable.at("/ageDays/0/count").asLong()).isEqualTo(count);
    JsonNode all = org.get("/metrics/distribution?state=all").json().get("distribution");
    assertThat(all.get("count").asLong())
        .isEqualTo(sql("SELECT COUNT(*) FROM memories WHERE org_id = :org"));
    assertThat(all.at("/states/suppressed").asLong())
        .isEqualTo(
            sql("SELECT COUNT(*) FROM memories WHERE org_id = :org AND state = 'suppressed'"));
  }

  static Map<String, Long> countsOf(JsonNode node) {
    Map<String, Long> counts = new HashMap<>();
    node.properties().forEach(e -> counts.put(e.getKey(), e.getValue().asLong()));
    return counts;
  }

  static Map<String, Long> eventCounts(String outcome) {
    return server.engram.services().database().read(h -> {
      Map<String, Long> counts = new HashMap<>();
      h.createQuery(
              "SELECT change, COUNT(*) AS n FROM reflection_events WHERE org_id = :org AND outcome = :outcome"
                  + " GROUP BY change")
          .bind("org", org.org())
          .bind("outcome", outcome)
          .map((rs, ctx) -> counts.put(rs.getString("change"), rs.getLong("n")))
          .list();
      return counts;
    });
  }
}
