package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The schedule counts each organization's interval from its last run in the database, and the
 * lease keeps a second run out while one holds it. The scheduler thread is off in tests; they
 * drive {@link ReflectionService#tick()} with the test clock.
 */
class ReflectionScheduleTest extends ServerTest {

  static List<String> startedFor(String org) {
    return server.engram.reflection().tick().stream()
        .filter(r -> r.orgId().equals(org))
        .map(ReflectionRun::id)
        .toList();
  }

  @Test
  void runsOnTheIntervalSinceTheLastRunAndNotBefore() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    assertThat(org.patchSettings("{\"intervalMinutes\":60}").status()).isEqualTo(200);
    assertThat(startedFor(org.org())).as("no memories, nothing to do").isEmpty();
    org.remember("Tyrell's fiscal year starts in April", "Tyrell");

    List<String> first = startedFor(org.org());
    assertThat(first).hasSize(1);
    JsonNode audit = org.awaitAudit(first.getFirst());
    assertThat(audit.at("/trigger/type").asText()).isEqualTo("schedule");
    assertThat(audit.at("/trigger/credentialId").isNull()).isTrue();
    assertThat(startedFor(org.org())).isEmpty();

    server.clock.advance(Duration.ofMinutes(59));
    assertThat(startedFor(org.org())).isEmpty();
    server.clock.advance(Duration.ofMinutes(1));
    List<String> second = startedFor(org.org());
    assertThat(second).hasSize(1);
    org.awaitAudit(second.getFirst());

    // A manual run counts as the last run too; a dry run does not.
    server.clock.advance(Duration.ofMinutes(30));
    org.run(false);
    server.clock.advance(Duration.ofMinutes(45));
    org.run(true);
    assertThat(startedFor(org.org())).isEmpty();
    server.clock.advance(Duration.ofMinutes(15));
    assertThat(startedFor(org.org())).hasSize(1);
  }

  @Test
  void anOrganizationThatTurnedTheScheduleOffIsNeverStarted() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    org.remember("Cyberdyne's audit is in May", "Cyberdyne");
    assertThat(org.patchSettings("{\"enabled\":false}").status()).isEqualTo(200);
    server.clock.advance(Duration.ofDays(30));
    assertThat(startedFor(org.org())).isEmpty();
    assertThat(org.post("/run", "").status()).as("a manual run still works").isEqualTo(202);
  }

  @Test
  void oneRunAtATimeAndARunLeftByAStoppedNodeIsMarkedFailed() {
    ReflectionClient org = ReflectionClient.create(server, "growth");
    org.remember("Aperture's lab reopens in June", "Aperture");
    long now = server.clock.millis();
    // Another node holds the lease, with a run it has not finished.
    server.engram.services().database().write(h -> {
      h.execute(
          "INSERT INTO reflection_runs (id, org_id, trigger, dry_run, status, settings, node, started_at,"
              + " examined) VALUES ('rrun_othernode', ?, 'schedule', 0, 'running', '{\"processes\":[\"decay\"]}', 'node-gone', ?, 0)",
          org.org(),
          now);
      return h.execute(
          "INSERT INTO reflection_leases (org_id, run_id, holder, expires_at) VALUES (?, ?, ?, ?)",
          org.org(),
          "rrun_othernode",
          "node-gone",
          now + 60_000);
    });
    Http.Response refused = org.post("/run", "{}");
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.json().get("message").asText()).contains("rrun_othernode");
    server.clock.advance(Duration.ofDays(2));
    assertThat(startedFor(org.org()))
        .as("the lease has expired: the schedule takes over")
        .hasSize(1);
    JsonNode orphan = org.get("/audits/rrun_othernode").json().get("audit");
    assertThat(orphan.get("status").asText()).isEqualTo("failed");
    assertThat(orphan.get("error").asText()).contains("stopped");
  }
}
