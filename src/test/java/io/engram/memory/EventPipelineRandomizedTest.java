package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.platform.json.Json;
import io.engram.support.Seeded;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Staging over random event texts: what is staged always obeys the pipeline's rules. */
@ExtendWith(Seeded.class)
class EventPipelineRandomizedTest {
  private static final String[] WORDS = {
    "Acme",
    "renewed",
    "the",
    "contract",
    "in",
    "April",
    "support",
    "plan",
    "is",
    "Pro",
    "who",
    "called",
    "today",
    "invoice",
    "paid"
  };
  private static final String[] ENDS = {". ", "! ", "? ", "\n", "\r\n", " ", ".\n\n", "?\n"};

  private static String randomText(Random random) {
    StringBuilder text = new StringBuilder();
    for (int sentence = 0, n = random.nextInt(25); sentence < n; sentence++) {
      for (int word = 0, w = 1 + random.nextInt(7); word < w; word++) {
        text.append(word == 0 ? "" : random.nextInt(8) == 0 ? "  " : " ")
            .append(WORDS[random.nextInt(WORDS.length)]);
      }
      text.append(ENDS[random.nextInt(ENDS.length)]);
    }
    return text.toString();
  }

  @Test
  void whatIsStagedObeysEveryRule(Random random) {
    for (int round = 0; round < 1_000; round++) {
      String text = randomText(random);
      Set<String> known = new HashSet<>();
      for (String part : text.split("(?<=[.!?])\\s+|\\R+")) {
        if (random.nextInt(6) == 0) {
          known.add(part.strip());
        }
      }
      Predicate<String> alreadyKnown = known::contains;
      EventPipeline.Plan plan = EventPipeline.plan(text, null, alreadyKnown);
      assertThat(EventPipeline.plan(text, null, alreadyKnown))
          .as("deterministic")
          .isEqualTo(plan);

      List<String> staged = plan.staged();
      assertThat(staged.size()).isLessThanOrEqualTo(EventPipeline.MAX_CANDIDATES);
      Set<String> normalized = new HashSet<>();
      for (String statement : staged) {
        assertThat(statement).isEqualTo(statement.strip()).isNotEmpty();
        assertThat(statement.split("\\s+")).hasSizeGreaterThanOrEqualTo(EventPipeline.MIN_WORDS);
        assertThat(statement).doesNotEndWith("?");
        assertThat(known).doesNotContain(statement);
        assertThat(normalized.add(EventPipeline.normalized(statement)))
            .as("staged twice: " + statement)
            .isTrue();
      }
      int stagedSoFar = 0;
      for (EventPipeline.Statement statement : plan.statements()) {
        if ("limit".equals(statement.skipReason())) {
          assertThat(stagedSoFar).isEqualTo(EventPipeline.MAX_CANDIDATES);
        }
        stagedSoFar += statement.staged() ? 1 : 0;
        assertThat(text).contains(statement.text());
      }
      assertThat(plan.kind()).isEqualTo(MemoryKind.EVENT);
      assertThat(plan.confidence()).isEqualTo(EventPipeline.DEFAULT_CONFIDENCE);
    }
  }

  @Test
  void anEventMarkedNotMemorableStagesNothing(Random random) {
    for (int round = 0; round < 200; round++) {
      var metadata = Json.MAPPER.createObjectNode().put("memorable", false);
      assertThat(EventPipeline.plan(randomText(random), metadata, s -> false).staged())
          .isEmpty();
    }
  }
}
