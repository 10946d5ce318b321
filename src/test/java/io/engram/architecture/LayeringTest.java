package io.engram.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Package arrows go one way (docs/decisions.md, "Layers"): a package may use the packages of
 * lower layers and, within its own layer, only itself. The check reads every main source file's
 * imports and fully qualified names, so a new arrow upwards or sideways fails here, naming the
 * file and the package it reached.
 */
class LayeringTest {
  /** Lowest first. Packages on one line are peers and may not use each other. */
  static final List<List<String>> LAYERS = List.of(
      List.of("platform.io", "platform.json"),
      List.of("platform"),
      List.of("platform.config"),
      List.of("platform.cluster"),
      List.of(
          "platform.logging",
          "platform.metrics",
          "platform.ratelimit",
          "platform.httpclient",
          "platform.crypto",
          "platform.net"),
      List.of("platform.http"),
      List.of("platform.module"),
      List.of("store"),
      List.of("organizations"),
      List.of("settings"),
      List.of("access"),
      List.of("administration"),
      List.of("network"),
      List.of("objectstores"),
      List.of("instances"),
      List.of("alerts"),
      List.of("capabilities"),
      List.of("memory"),
      List.of("reflection"),
      List.of("actions"),
      List.of("inference.engine"),
      List.of("inference.local", "inference.remote"),
      List.of("finetuning.trainer"),
      List.of("inference.models", "inference.usage"),
      List.of("inference"),
      List.of("finetuning"),
      List.of("operations"),
      List.of("console"),
      List.of(""));

  private static final Path SOURCES = Path.of("src/main/java");
  private static final Pattern PACKAGE =
      Pattern.compile("^package (io\\.engram[\\w.]*);", Pattern.MULTILINE);
  /** An import or a qualified name: the package is everything before the first capitalized part. */
  private static final Pattern REFERENCE =
      Pattern.compile("\\bio\\.engram((?:\\.[a-z]\\w*)*)\\.[A-Z]");

  @Test
  void everyPackageIsInALayer() {
    TreeSet<String> unknown = new TreeSet<>();
    for (SourceFile file : sources()) {
      if (layerOf(file.pkg) < 0) {
        unknown.add(file.pkg);
      }
    }
    assertThat(unknown).as("packages missing from LayeringTest.LAYERS").isEmpty();
  }

  @Test
  void noPackageUsesOneAboveItOrBesideIt() {
    List<String> violations = new ArrayList<>();
    for (SourceFile file : sources()) {
      int from = layerOf(file.pkg);
      Matcher reference = REFERENCE.matcher(file.text);
      TreeSet<String> reached = new TreeSet<>();
      while (reference.find()) {
        String target = reference.group(1).isEmpty() ? "" : reference.group(1).substring(1);
        if (!target.equals(file.pkg) && layerOf(target) >= from) {
          reached.add(target.isEmpty() ? "io.engram" : "io.engram." + target);
        }
      }
      reached.forEach(target -> violations.add(file.path + " (layer " + from + ") uses " + target));
    }
    assertThat(violations).isEmpty();
  }

  @Test
  void theRuleItselfRefusesAnArrowUpwards() {
    assertThat(layerOf("access")).isGreaterThan(layerOf("organizations"));
    assertThat(layerOf("platform.http")).isLessThan(layerOf("access"));
    Matcher reference = REFERENCE.matcher("import io.engram.access.Authentication;");
    assertThat(reference.find()).isTrue();
    assertThat(reference.group(1)).isEqualTo(".access");
  }

  private static int layerOf(String pkg) {
    for (int i = 0; i < LAYERS.size(); i++) {
      if (LAYERS.get(i).contains(pkg)) {
        return i;
      }
    }
    return -1;
  }

  private record SourceFile(Path path, String pkg, String text) {}

  private static List<SourceFile> sources() {
    try (Stream<Path> files = Files.walk(SOURCES)) {
      List<SourceFile> result = new ArrayList<>();
      for (Path path : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String text = Files.readString(path);
        Matcher pkg = PACKAGE.matcher(text);
        assertThat(pkg.find()).as("package of " + path).isTrue();
        String name =
            pkg.group(1).equals("io.engram") ? "" : pkg.group(1).substring("io.engram.".length());
        result.add(new SourceFile(path, name, text));
      }
      assertThat(result).as("sources under " + SOURCES.toAbsolutePath()).hasSizeGreaterThan(100);
      return result;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
