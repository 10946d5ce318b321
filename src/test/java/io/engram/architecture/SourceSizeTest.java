package io.engram.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The house stays easy to live in (docs/decisions.md, "A model call's stages"): no main source
 * file passes {@link #MAX_LINES}, the gateway (where every feature around a model call used to
 * land) stays within {@link #MAX_GATEWAY_LINES}, since a new concern is a stage, and no two main
 * classes share a simple name, so a name says which one it is.
 */
class SourceSizeTest {
  static final int MAX_LINES = 700;
  static final int MAX_GATEWAY_LINES = 450;

  private static final Path SOURCES = Path.of("src/main/java");
  private static final Path GATEWAY = SOURCES.resolve("io/engram/inference/Gateway.java");

  @Test
  void noMainFileIsLongerThanTheLimit() {
    assertThat(tooLong(lines(), MAX_LINES))
        .as("main files over %d lines", MAX_LINES)
        .isEmpty();
  }

  @Test
  void theGatewayKeepsPreparationAndAdmissionOnly() {
    assertThat(lineCount(GATEWAY)).isLessThanOrEqualTo(MAX_GATEWAY_LINES);
  }

  @Test
  void noTwoMainClassesShareASimpleName() {
    assertThat(sharedNames(sources().toList()))
        .as("simple names of more than one main class")
        .isEmpty();
  }

  /** The checks fail on what they are meant to catch: a long file, a second name. */
  @Test
  void theChecksCatchWhatTheyAreFor() {
    Map<Path, Integer> planted = new TreeMap<>(lines());
    planted.put(SOURCES.resolve("io/engram/Planted.java"), MAX_LINES + 1);
    assertThat(tooLong(planted, MAX_LINES)).containsKey(SOURCES.resolve("io/engram/Planted.java"));
    assertThat(tooLong(lines(), 1)).isNotEmpty();
    List<Path> twice = Stream.concat(
            sources(), Stream.of(SOURCES.resolve("io/engram/memory/solr/Gateway.java")))
        .toList();
    assertThat(sharedNames(twice)).containsKey("Gateway.java");
  }

  private static Map<String, List<Path>> sharedNames(List<Path> files) {
    Map<String, List<Path>> byName = files.stream()
        .collect(Collectors.groupingBy(
            path -> path.getFileName().toString(), TreeMap::new, Collectors.toList()));
    byName.values().removeIf(paths -> paths.size() < 2);
    return byName;
  }

  private static Map<Path, Integer> tooLong(Map<Path, Integer> lines, int max) {
    Map<Path, Integer> over = new TreeMap<>(lines);
    over.values().removeIf(count -> count <= max);
    return over;
  }

  private static Map<Path, Integer> lines() {
    return sources()
        .collect(
            Collectors.toMap(path -> path, SourceSizeTest::lineCount, (a, b) -> a, TreeMap::new));
  }

  private static int lineCount(Path file) {
    try (Stream<String> lines = Files.lines(file)) {
      return (int) lines.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Stream<Path> sources() {
    try (Stream<Path> walk = Files.walk(SOURCES)) {
      return walk.filter(p -> p.toString().endsWith(".java")).sorted().toList().stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
