package io.engram.reflection;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.memory.ChangeAuthor;
import io.engram.memory.MemoryKind;
import io.engram.memory.MemoryRecord;
import io.engram.memory.MemoryState;
import io.engram.support.Seeded;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The conflict rule over random pairs of statements: symmetric, and the cheap filter never hides one. */
@ExtendWith(Seeded.class)
class ConflictRuleRandomizedTest {
  private static final Instant AT = Instant.parse("2030-01-01T00:00:00Z");
  private static final String[] WORDS = {
    "customer",
    "prefers",
    "email",
    "phone",
    "plan",
    "pro",
    "enterprise",
    "office",
    "berlin",
    "paris",
    "renewal",
    "april",
    "june",
    "invoice",
    "monthly"
  };
  private static final String[] NEGATIONS = {"not", "never", "doesn't", "no"};
  private static final MemoryKind[] KINDS = MemoryKind.values();

  private static String statement(Random random) {
    StringBuilder text = new StringBuilder("The");
    for (int i = 0, n = 2 + random.nextInt(5); i < n; i++) {
      text.append(' ');
      if (random.nextInt(8) == 0) {
        text.append(NEGATIONS[random.nextInt(NEGATIONS.length)]).append(' ');
      }
      text.append(WORDS[random.nextInt(WORDS.length)]);
    }
    return text.append('.').toString();
  }

  /** A variant of the statement: a word swapped, a negation added, or the same. */
  private static String variant(String text, Random random) {
    return switch (random.nextInt(3)) {
      case 0 -> text.replaceFirst(" \\w+\\.$", " " + WORDS[random.nextInt(WORDS.length)] + ".");
      case 1 ->
        text.replaceFirst("^The ", "The " + NEGATIONS[random.nextInt(NEGATIONS.length)] + " ");
      default -> text;
    };
  }

  private static MemoryRecord memory(String text, MemoryKind kind) {
    return MemoryRecord.created(
        new MemoryRecord.Draft("org_1", null, text, "Acme", kind, 0.9, null),
        MemoryState.DURABLE,
        MemoryRecord.Origin.encoded(null, new ChangeAuthor(null, null, null)),
        AT,
        AT,
        null);
  }

  /** The documented rule, computed in full, without the cheap filter. */
  private static boolean conflictByTheDocument(
      MemoryRecord a, ConflictRule.Reading ra, MemoryRecord b, ConflictRule.Reading rb) {
    Set<String> shared = new HashSet<>(ra.terms());
    shared.retainAll(rb.terms());
    int onlyA = ra.terms().size() - shared.size();
    int onlyB = rb.terms().size() - shared.size();
    int union = shared.size() + onlyA + onlyB;
    if (ra.negated() != rb.negated()) {
      return shared.size() >= 2 && shared.size() >= ConflictRule.NEGATION_OVERLAP * union;
    }
    Set<MemoryKind> statements = Set.of(
        MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.INSTRUCTION, MemoryKind.PROCEDURE);
    return statements.contains(a.kind())
        && statements.contains(b.kind())
        && shared.size() >= 2
        && onlyA == 1
        && onlyB == 1;
  }

  @Test
  void theRuleIsSymmetricAndItsFilterHidesNoConflict(Random random) {
    int conflicts = 0;
    for (int round = 0; round < 5_000; round++) {
      String textA = statement(random);
      String textB = random.nextBoolean() ? variant(textA, random) : statement(random);
      MemoryRecord a = memory(textA, KINDS[random.nextInt(KINDS.length)]);
      MemoryRecord b = memory(textB, KINDS[random.nextInt(KINDS.length)]);
      ConflictRule.Reading ra = ConflictRule.Reading.of(textA);
      ConflictRule.Reading rb = ConflictRule.Reading.of(textB);
      Optional<String> ab = ConflictRule.check(a, ra, b, rb);
      assertThat(ConflictRule.check(b, rb, a, ra).isPresent())
          .as("%s / %s", textA, textB)
          .isEqualTo(ab.isPresent());
      assertThat(ab.isPresent())
          .as("%s / %s", textA, textB)
          .isEqualTo(conflictByTheDocument(a, ra, b, rb));
      if (ab.isPresent()) {
        conflicts++;
        assertThat(ConflictRule.mayConflict(ra, rb)).isTrue();
      }
      assertThat(ConflictRule.check(a, ra, memory(textA, a.kind()), ra))
          .as("a memory against its own text")
          .isEmpty();
    }
    assertThat(conflicts).as("the generator makes conflicts too").isGreaterThan(50);
  }

  @Test
  void eventsAndObservationsAreNeverInAValueConflict(Random random) {
    for (int round = 0; round < 2_000; round++) {
      String textA = statement(random);
      String textB = variant(textA, random);
      ConflictRule.Reading ra = ConflictRule.Reading.of(textA);
      ConflictRule.Reading rb = ConflictRule.Reading.of(textB);
      MemoryKind kind = random.nextBoolean() ? MemoryKind.EVENT : MemoryKind.OBSERVATION;
      Optional<String> found =
          ConflictRule.check(memory(textA, kind), ra, memory(textB, MemoryKind.FACT), rb);
      found.ifPresent(reason -> assertThat(reason).startsWith("negation"));
    }
  }
}
