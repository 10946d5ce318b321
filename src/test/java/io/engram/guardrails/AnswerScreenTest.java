package io.engram.guardrails;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * An answer screened as it streams, a piece at a time, is what the client would get from the
 * whole answer screened at once, however the pieces are cut (through a card number, an email, a
 * key): nothing found is let go before it is redacted, and no more than the guardrails' reach is
 * held back while nothing is found. Randomized cuts over texts that hold every built-in kind.
 */
class AnswerScreenTest {
  private static final String[] FOUND = {
    "ana.martin@example.com",
    "4111 1111 1111 1111",
    "+44 20 7946 0958",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "postgres://app:s3cretPass@db.internal:5432/app",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + "x".repeat(900)
        + "\n-----END RSA PRIVATE KEY-----",
  };
  private static final String[] WORDS = {
    "the",
    "order",
    "ships",
    "on",
    "Monday",
    "and",
    "costs",
    "forty-two",
    "euros",
    "per",
    "month,",
    "call",
    "us",
    "at",
    "the",
    "office.",
    "Project",
    "Falcon",
    "is",
    "late."
  };

  private static Guardrail guardrail(String id, String body) {
    return Guardrail.of(
        id,
        "org_1",
        GuardrailSpec.parse(Json.read(body, com.fasterxml.jackson.databind.node.ObjectNode.class)),
        0,
        0);
  }

  private static final List<Guardrail> REDACTING = List.of(
      guardrail("grd_pii", """
          {"name":"pii","applies_to":["output"],"check":{"type":"pii"},"action":"redact"}"""), guardrail("grd_secrets", """
          {"name":"secrets","applies_to":["output"],"check":{"type":"secrets"},"action":"redact"}"""), guardrail("grd_terms", """
          {"name":"terms","applies_to":["output"],"check":{"type":"terms","terms":["Project Falcon"]},
           "action":"redact"}"""));

  @Test
  void streamedInRandomPiecesTheClientGetsWhatTheWholeAnswerScreenedGives() {
    Random random = new Random(66);
    for (int round = 0; round < 300; round++) {
      String text = answer(random);
      String whole = screened(text, List.of(text));
      String streamed = screened(text, cut(text, random));
      int differs = 0;
      while (differs < Math.min(whole.length(), streamed.length())
          && whole.charAt(differs) == streamed.charAt(differs)) {
        differs++;
      }
      assertThat(streamed)
          .as(
              "round %d, from %d: whole [%s], streamed [%s]",
              round,
              differs,
              whole.substring(Math.max(0, differs - 40), Math.min(whole.length(), differs + 60)),
              streamed.substring(
                  Math.max(0, differs - 40), Math.min(streamed.length(), differs + 60)))
          .isEqualTo(whole);
      for (String secret : FOUND) {
        assertThat(streamed).doesNotContain(secret.substring(0, Math.min(12, secret.length())));
      }
    }
  }

  @Test
  void nothingFoundIsHeldBackLongerThanTheReachOfTheGuardrails() {
    AnswerScreen screen = new AnswerScreen(REDACTING, new Placeholders(), firing -> {});
    assertThat(screen.holdback()).isEqualTo(600); // the secrets' longest bounded key
    StringBuilder sent = new StringBuilder();
    StringBuilder let = new StringBuilder();
    Random random = new Random(7);
    for (int i = 0; i < 2_000; i++) {
      String piece = WORDS[random.nextInt(WORDS.length)] + " ";
      sent.append(piece);
      let.append(screen.take(piece));
      // The reach, and a term that straddles its edge (let go whole, once it is)
      int raw = let.toString().replace("[TERM_1]", "Project Falcon").length();
      assertThat(sent.length() - raw)
          .isLessThanOrEqualTo(screen.holdback() + "Project Falcon".length());
    }
    let.append(screen.finish());
    assertThat(let.toString()).isEqualTo(sent.toString().replace("Project Falcon", "[TERM_1]"));
  }

  @Test
  void aBlockStopsTheAnswerBeforeAnyOfTheBlockedTextIsLetGo() {
    Guardrail block = guardrail("grd_block", """
        {"name":"no keys","applies_to":["output"],"check":{"type":"secrets"},"action":"block"}""");
    AnswerScreen screen = new AnswerScreen(List.of(block), new Placeholders(), firing -> {});
    StringBuilder let = new StringBuilder();
    String text =
        "word ".repeat(200) + "the key is AKIAIOSFODNN7EXAMPLE and " + "more ".repeat(200);
    String out = "";
    for (int i = 0; i < text.length() && out != null; i += 3) {
      out = screen.take(text.substring(i, Math.min(text.length(), i + 3)));
      let.append(out == null ? "" : out);
    }
    assertThat(out).isNull();
    assertThat(screen.blockedBy().guardrail().id()).isEqualTo("grd_block");
    assertThat(let.toString()).doesNotContain("AKIA");
    assertThat(screen.finish()).isNull();
  }

  @Test
  void placeholdersCutAcrossPiecesAreRestoredWholeAndOthersPassAsTheyCame() {
    Restorer restorer = new Restorer(java.util.Map.of("[EMAIL_1]", "ana@example.com"));
    StringBuilder out = new StringBuilder();
    for (String piece : List.of("Write to [EMA", "IL_1] or [TEAM", "] [", "EMAIL_1", "]!")) {
      out.append(restorer.take(piece));
    }
    out.append(restorer.finish());
    assertThat(out.toString()).isEqualTo("Write to ana@example.com or [TEAM] ana@example.com!");
  }

  private static String screened(String text, List<String> pieces) {
    AnswerScreen screen = new AnswerScreen(REDACTING, new Placeholders(), firing -> {});
    StringBuilder out = new StringBuilder();
    for (String piece : pieces) {
      out.append(screen.take(piece));
    }
    return out.append(screen.finish()).toString();
  }

  private static String answer(Random random) {
    StringBuilder text = new StringBuilder();
    int words = 20 + random.nextInt(400);
    for (int i = 0; i < words; i++) {
      if (random.nextInt(25) == 0) {
        // A word after it: two numbers in a row are one run to the detectors (DetectorsTest)
        text.append(FOUND[random.nextInt(FOUND.length)]).append(" to");
      } else {
        text.append(WORDS[random.nextInt(WORDS.length)]);
      }
      text.append(random.nextInt(10) == 0 ? "\n" : " ");
    }
    return text.toString();
  }

  private static List<String> cut(String text, Random random) {
    List<String> pieces = new ArrayList<>();
    for (int at = 0; at < text.length(); ) {
      int next = Math.min(text.length(), at + 1 + random.nextInt(random.nextBoolean() ? 4 : 40));
      pieces.add(text.substring(at, next));
      at = next;
    }
    return pieces;
  }
}
