package io.engram.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
          "platform.net",
          "platform.tracing"),
      List.of("platform.http"),
      List.of("platform.module"),
      List.of("guardrails.detect"),
      List.of("store"),
      List.of("organizations"),
      List.of("settings"),
      List.of("access"),
      List.of("administration"),
      List.of("network"),
      List.of("guardrails"),
      List.of("objectstores"),
      List.of("instances.storage"),
      List.of("instances.files"),
      List.of("instances.retention", "instances.snapshots"),
      List.of("instances"),
      List.of("alerts"),
      List.of("capabilities"),
      List.of("memory"),
      List.of("memory.solr", "memory.lucene", "memory.transfer", "memory.erasure"),
      List.of("reflection"),
      List.of("actions"),
      List.of("budgets"),
      List.of("inference.engine"),
      List.of("inference.local", "inference.remote"),
      List.of("finetuning.trainer"),
      List.of("inference.models", "inference.usage"),
      List.of("inference.routing"),
      List.of("inference.call"),
      List.of("inference"),
      List.of("finetuning"),
      List.of("operations"),
      List.of("console"),
      List.of(""));

  private static final Path SOURCES = Path.of("src/main/java");
  private static final Pattern PACKAGE =
      Pattern.compile("^package (io\\.engram[\\w.]*);", Pattern.MULTILINE);
  /** An import or a qualified name: the package is everything before the first capitalized part. */
  static final Pattern REFERENCE = Pattern.compile("\\bio\\.engram((?:\\.[a-z]\\w*)*)\\.[A-Z]");

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

  /**
   * Reads of another package's table that are allowed, each for a reason; the list is exact (an
   * entry no longer needed fails too), so it can only shrink. Writes are never allowed.
   */
  static final Set<String> READS_ACROSS = Set.of(
      // The analytics capability counts the organization's keys and people.
      "capabilities reads credentials",
      "capabilities reads users",
      // The default instance's variables are in force for the organization's requests.
      "settings reads instances",
      // Backups are due per running instance; path permissions name the organization's users.
      "instances reads instances",
      "instances reads users",
      // Storage usage counts the memory vectors' bytes; snapshots and uploads lock the
      // organization's row so storage writes and a snapshot do not interleave.
      "instances reads memories",
      "instances reads organizations",
      // Reflection reads the memories it revisits and the organizations that are due.
      "reflection reads memories",
      "reflection reads organizations");

  /** A table name after the SQL words (upper case, as all of ours) that write it, or read it. */
  private static final Pattern SQL_WRITE =
      Pattern.compile("\\b(?:INSERT\\s+INTO|UPDATE|DELETE\\s+FROM)\\s+([a-z_]+)\\b");

  private static final Pattern SQL_READ = Pattern.compile("\\b(?:FROM|JOIN)\\s+([a-z_]+)\\b");
  private static final Pattern STRING =
      Pattern.compile("\"\"\"(.*?)\"\"\"|\"((?:[^\"\\\\\\n]|\\\\.)*)\"", Pattern.DOTALL);

  /**
   * Each domain owns its tables (docs/decisions.md, "Modules"): the package whose SQL creates a
   * table's rows owns it, no other package writes it, and reads across are the listed ones only.
   * Snapshots and restores ask each domain for its part ({@code store.OrganizationData}).
   */
  @Test
  void everyPackageWritesOnlyItsOwnTables() {
    assertThat(tableViolations(sources())).isEmpty();
  }

  @Test
  void thePlantedCrossDomainStatementIsFound() {
    List<SourceFile> planted = new ArrayList<>(sources());
    planted.add(
        new SourceFile(
            Path.of("src/main/java/io/engram/alerts/Planted.java"),
            "alerts",
            "class Planted { String sql = \"UPDATE memories SET state = 'tombstoned' WHERE id = :id\"; }"));
    assertThat(tableViolations(planted))
        .containsExactly("alerts writes memories (owned by memory): UPDATE in Planted.java");
  }

  /**
   * The domain a package belongs to, whose tables it may write: its first segment, so a domain's
   * subpackages (the memory's index, transfer and erasure; the instances' storage, files,
   * retention and snapshots; the gateway's usage and routing) share its tables.
   */
  static String domainOf(String pkg) {
    int dot = pkg.indexOf('.');
    return dot < 0 ? pkg : pkg.substring(0, dot);
  }

  private static List<String> tableViolations(List<SourceFile> files) {
    Map<String, Set<String>> owners = new TreeMap<>();
    Map<String, Map<String, Set<String>>> writes = new TreeMap<>();
    Set<String> reads = new TreeSet<>();
    for (SourceFile file : files) {
      String domain = domainOf(file.pkg);
      Matcher literal = STRING.matcher(file.text);
      while (literal.find()) {
        String sql = literal.group(1) != null ? literal.group(1) : literal.group(2);
        Matcher write = SQL_WRITE.matcher(sql);
        while (write.find()) {
          String verb = write.group().trim().split("\\s+")[0].toUpperCase(java.util.Locale.ROOT);
          String table = write.group(1).toLowerCase(java.util.Locale.ROOT);
          if (verb.equals("INSERT")) {
            owners.computeIfAbsent(table, t -> new TreeSet<>()).add(domain);
          }
          writes
              .computeIfAbsent(table, t -> new TreeMap<>())
              .computeIfAbsent(domain, p -> new TreeSet<>())
              .add(verb + " in " + file.path.getFileName());
        }
        Matcher read = SQL_READ.matcher(sql);
        while (read.find()) {
          reads.add(domain + " " + read.group(1).toLowerCase(java.util.Locale.ROOT));
        }
      }
    }
    List<String> violations = new ArrayList<>();
    owners.forEach((table, by) -> {
      if (by.size() > 1) {
        violations.add(table + " is created by " + by + "; one package owns each table");
      }
    });
    // A table no statement inserts into (a single counter row) is owned by the one that writes it.
    writes.forEach((table, byPackage) -> owners.putIfAbsent(table, byPackage.keySet()));
    writes.forEach((table, byPackage) -> {
      Set<String> owner = owners.get(table);
      byPackage.forEach((pkg, how) -> {
        if (!owner.contains(pkg)) {
          how.forEach(what -> violations.add(
              pkg + " writes " + table + " (owned by " + String.join(", ", owner) + "): " + what));
        }
      });
    });
    Set<String> across = new TreeSet<>();
    for (String read : reads) {
      String[] parts = read.split(" ");
      Set<String> owner = owners.get(parts[1]);
      if (owner != null && !owner.contains(parts[0])) {
        across.add(parts[0] + " reads " + parts[1]);
      }
    }
    for (String read : across) {
      if (!READS_ACROSS.contains(read)) {
        violations.add(
            read + " (owned by " + owners.get(read.split(" ")[2]) + "), not in READS_ACROSS");
      }
    }
    for (String allowed : READS_ACROSS) {
      if (!across.contains(allowed)) {
        violations.add("READS_ACROSS lists '" + allowed + "', which no longer happens: remove it");
      }
    }
    return violations;
  }

  private static int layerOf(String pkg) {
    for (int i = 0; i < LAYERS.size(); i++) {
      if (LAYERS.get(i).contains(pkg)) {
        return i;
      }
    }
    return -1;
  }

  record SourceFile(Path path, String pkg, String text) {}

  static List<SourceFile> sources() {
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
