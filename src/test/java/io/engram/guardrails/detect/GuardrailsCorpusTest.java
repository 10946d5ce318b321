package io.engram.guardrails.detect;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The built-in detectors measured: on the project's labelled corpus (bench/guardrails-corpus.py:
 * 600 texts holding personal data, secrets or injections, 2,400 of everyday chat with near
 * misses), each kind's recall and the share of negatives anything fires on; and on the shared
 * development sets (real conversations and meetings nobody wrote for this), the share of texts
 * anything fires on. The figures are printed and held to docs/guardrails.md's bounds.
 */
class GuardrailsCorpusTest {
  private static final List<Detector> DETECTORS =
      List.of(new PiiDetector(Set.of()), new SecretsDetector(), new InjectionDetector());

  /** The kinds a checksum decides: found whenever present. */
  private static final Set<String> CHECKSUMMED = Set.of(PiiDetector.PAYMENT_CARD, PiiDetector.IBAN);

  private static Set<String> kinds(String text) {
    Set<String> kinds = new HashSet<>();
    DETECTORS.forEach(detector -> detector.find(text).forEach(f -> kinds.add(f.kind())));
    return kinds;
  }

  @Test
  void everyKindIsFoundAndEverydayTextIsLeftAlone() throws IOException {
    Map<String, int[]> recall = new TreeMap<>(); // kind -> found, held
    int negatives = 0;
    List<String> falsePositives = new ArrayList<>();
    try (InputStream in = getClass().getResourceAsStream("/guardrails/corpus.jsonl")) {
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        JsonNode item = Json.MAPPER.readTree(line);
        String text = item.get("text").asText();
        Set<String> found = kinds(text);
        if (item.get("kinds").isEmpty()) {
          negatives++;
          if (!found.isEmpty()) {
            falsePositives.add(found + " in: " + text);
          }
        }
        for (JsonNode kind : item.get("kinds")) {
          int[] counts = recall.computeIfAbsent(kind.asText(), k -> new int[2]);
          counts[1]++;
          counts[0] += found.contains(kind.asText()) ? 1 : 0;
        }
      }
    }
    StringBuilder figures = new StringBuilder();
    recall.forEach((kind, counts) -> figures.append(String.format(
        "%s %d/%d = %.3f%n", kind, counts[0], counts[1], counts[0] / (double) counts[1])));
    double falseShare = falsePositives.size() / (double) negatives;
    figures.append(String.format(
        "negatives fired on: %d/%d = %.4f%n", falsePositives.size(), negatives, falseShare));
    System.out.print(figures);
    int positives = recall.values().stream().mapToInt(c -> c[1]).sum();
    assertThat(positives).isGreaterThanOrEqualTo(500);
    assertThat(negatives).isGreaterThanOrEqualTo(2000);
    recall.forEach((kind, counts) -> assertThat(counts[0] / (double) counts[1])
        .as("recall of %s (%s)", kind, figures)
        .isGreaterThanOrEqualTo(CHECKSUMMED.contains(kind) ? 0.98 : 0.95));
    assertThat(falseShare).as("%s", falsePositives).isLessThanOrEqualTo(0.005);
  }

  @Test
  void realConversationsNobodyWroteForThisAreLeftAlone() throws IOException {
    Path root = Path.of(System.getProperty("engram.datasets", "../shared/datasets"));
    // realmem's users paste real contact lists and connection strings: it is not a negative set.
    List<String> sets = List.of("locomo-dev", "friendsqa", "qmsum");
    Assumptions.assumeTrue(
        Files.isRegularFile(root.resolve("locomo-dev/locomo-dev.json")),
        () -> "the shared development sets are not at " + root.toAbsolutePath()
            + " (-Dengram.datasets=<dir> points elsewhere)");
    for (String set : sets) {
      List<String> all = new ArrayList<>();
      strings(Json.MAPPER.readTree(root.resolve(set + "/" + set + ".json").toFile()), all);
      // At most 20,000 texts a set, evenly spread (qmsum alone has 83,000 pieces).
      int stride = Math.max(1, all.size() / 20_000);
      List<String> texts = new ArrayList<>();
      for (int i = 0; i < all.size(); i += stride) {
        texts.add(all.get(i));
      }
      List<String> fired = new ArrayList<>();
      for (String text : texts) {
        if (!kinds(text).isEmpty()) {
          fired.add(kinds(text) + " in: " + text.substring(0, Math.min(200, text.length())));
        }
      }
      System.out.printf("%s: fired on %d of %d texts%n", set, fired.size(), texts.size());
      assertThat(fired.size() / (double) texts.size())
          .as("%s: %s", set, fired)
          .isLessThanOrEqualTo(0.005);
    }
  }

  /** Every string of 20 characters or more, in pieces of at most 2,000. */
  private static void strings(JsonNode node, List<String> into) {
    if (node.isTextual() && node.asText().length() >= 20) {
      String text = node.asText();
      for (int i = 0; i < text.length(); i += 2000) {
        into.add(text.substring(i, Math.min(text.length(), i + 2000)));
      }
    }
    node.forEach(child -> strings(child, into));
  }
}
