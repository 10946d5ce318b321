package io.engram.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Periodic work is a {@code Job} of its module, run by the one {@code JobScheduler} (named, logged
 * at start, counted), not a timer a class keeps of its own (docs/decisions.md, "A model call's
 * stages"). The exceptions are an exact list, each for a reason, so it can only shrink.
 */
class TimersTest {
  private static final Path SOURCES = Path.of("src/main/java");
  private static final Pattern TIMER = Pattern.compile(
      "ScheduledExecutorService|ScheduledThreadPoolExecutor|new Timer\\(|scheduleAtFixedRate"
          + "|scheduleWithFixedDelay");

  static final Set<String> OWN_TIMERS = Set.of(
      // The scheduler itself.
      "io/engram/platform/module/JobScheduler.java",
      // Below the module layer and running before any module opens: the Redis connection's
      // health probe (readiness reads it from start-up) and the Redis concurrency slots' lease
      // renewal (a slot taken must be renewed whoever holds it).
      "io/engram/platform/cluster/RedisConnection.java",
      "io/engram/platform/ratelimit/RedisSlots.java");

  @Test
  void onlyTheListedClassesKeepATimerOfTheirOwn() {
    assertThat(withTimers()).isEqualTo(new TreeSet<>(OWN_TIMERS));
  }

  private static Set<String> withTimers() {
    Set<String> found = new TreeSet<>();
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      for (Path file : walk.filter(p -> p.toString().endsWith(".java")).toList()) {
        if (TIMER.matcher(Files.readString(file)).find()) {
          found.add(SOURCES.relativize(file).toString().replace('\\', '/'));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }
}
