package io.engram.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.module.JobScheduler;
import io.engram.platform.module.Module;
import io.engram.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The house's picture, drawn from the house itself: the modules a running server opens (in their
 * order) with the jobs each runs, and which packages each package uses. {@code docs/modules.md} is
 * this picture; the test fails when the code moved and the page did not. Redraw it with
 *
 * <pre>mvn test -Dtest=ModulePictureTest -Dengram.redraw=true</pre>
 */
class ModulePictureTest {
  private static final Path PAGE = Path.of("docs/modules.md");

  @Test
  void docsModulesIsThePictureOfTheCode() throws IOException {
    String picture = draw();
    if (Boolean.getBoolean("engram.redraw")) {
      Files.writeString(PAGE, picture);
    }
    assertThat(Files.exists(PAGE))
        .as(
            "docs/modules.md is missing; run: mvn test -Dtest=ModulePictureTest -Dengram.redraw=true")
        .isTrue();
    assertThat(Files.readString(PAGE))
        .as(
            "docs/modules.md is out of date; run: mvn test -Dtest=ModulePictureTest -Dengram.redraw=true")
        .isEqualTo(picture);
  }

  private static String draw() throws IOException {
    StringBuilder page = new StringBuilder();
    page.append("# Modules\n\n")
        .append("Drawn by `ModulePictureTest` from a running server and the sources; redraw with\n")
        .append(
            "`mvn test -Dtest=ModulePictureTest -Dengram.redraw=true` (the test fails when this page\n")
        .append(
            "and the code disagree). Why the house is built this way: `docs/decisions.md`, \"Modules\".\n\n")
        .append("## The modules, in the order `Engram` opens them\n\n")
        .append("They are closed in the reverse order; their routes are served in the order\n")
        .append("`Engram.open` lists them (the console's and operations' first). Jobs run on the\n")
        .append(
            "server's one `JobScheduler`, on a single node as shown here (on a shared database,\n")
        .append(
            "settings and memory also follow the other nodes' changes every second), each job on a\n")
        .append("thread of its own, so a slow run delays only that job; each run is counted in\n")
        .append("`/metrics` (`engram_job_runs_total`, `engram_job_duration_seconds`).\n\n")
        .append("| module | class | background jobs (period) |\n|---|---|---|\n");
    // The picture is a single node's: on a shared database (PostgreSQL), settings and memory also
    // follow the other nodes' changes every second; the reflection tick runs unless
    // ENGRAM_REFLECTION_SCHEDULER=false (as in tests).
    try (TestServer server = TestServer.start()) {
      List<JobScheduler.Scheduled> jobs = server.engram.jobs();
      for (Module module : server.engram.modules()) {
        String listed = jobs.stream()
            .filter(job -> job.module().equals(module.name()))
            .map(job -> job.job().name() + " (" + period(job.job().period()) + ")")
            .collect(Collectors.joining("; "));
        page.append("| ")
            .append(module.name())
            .append(" | `")
            .append(module.getClass().getName().replace("io.engram.", ""))
            .append("` | ")
            .append(listed.isEmpty() ? "none" : listed)
            .append(" |\n");
      }
    }
    page.append("\n## Which packages each package uses\n\n")
        .append(
            "Lowest first, as `LayeringTest.LAYERS` orders them; an arrow never points up.\n\n```\n");
    Map<String, Set<String>> uses = uses();
    for (List<String> layer : LayeringTest.LAYERS) {
      for (String pkg : layer) {
        String name = pkg.isEmpty() ? "io.engram" : pkg;
        Set<String> used = uses.getOrDefault(pkg, Set.of());
        page.append(name)
            .append(" -> ")
            .append(used.isEmpty() ? "(nothing)" : String.join(", ", used))
            .append('\n');
      }
    }
    return page.append("```\n").toString();
  }

  private static String period(Duration period) {
    if (period.toHours() > 0 && period.toMinutesPart() == 0 && period.toSecondsPart() == 0) {
      return period.toHours() + " h";
    }
    if (period.toMinutes() > 0 && period.toSecondsPart() == 0) {
      return period.toMinutes() + " min";
    }
    return period.toMillis() % 1000 == 0 ? period.toSeconds() + " s" : period.toMillis() + " ms";
  }

  private static Map<String, Set<String>> uses() {
    Map<String, Set<String>> uses = new TreeMap<>();
    for (LayeringTest.SourceFile file : LayeringTest.sources()) {
      Set<String> used = uses.computeIfAbsent(file.pkg(), p -> new TreeSet<>());
      Matcher reference = LayeringTest.REFERENCE.matcher(file.text());
      while (reference.find()) {
        String target = reference.group(1).isEmpty() ? "" : reference.group(1).substring(1);
        if (!target.equals(file.pkg())) {
          used.add(target.isEmpty() ? "io.engram" : target);
        }
      }
    }
    return uses;
  }
}
