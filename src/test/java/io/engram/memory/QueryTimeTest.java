package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The times a question names, read without a language model, and what is not read as one. */
class QueryTimeTest {
  static final Instant NOW = Instant.parse("2023-08-20T12:00:00Z");

  private static Optional<QueryTime.Range> named(String query) {
    return QueryTime.named(query, NOW);
  }

  private static void names(String query, String from, String to) {
    QueryTime.Range range =
        named(query).orElseThrow(() -> new AssertionError("no time in " + query));
    assertThat(range.from()).as(query).isEqualTo(Instant.parse(from).minus(QueryTime.ZONES));
    assertThat(range.to()).as(query).isEqualTo(Instant.parse(to).plus(QueryTime.ZONES));
  }

  @Test
  void theDateIsTakenOutOfTheWordsLeftToMatch() {
    assertThat(named("What did Maria start, as mentioned on 3 June, 2023?")
            .orElseThrow()
            .otherWords())
        .isEqualTo("what did maria start, as mentioned on ?");
    assertThat(named("When did Melanie go camping in June?").orElseThrow().otherWords())
        .isEqualTo("when did melanie go camping ?");
  }

  @Test
  void aDayInTheWaysPeopleWriteIt() {
    String from = "2023-06-03T00:00:00Z";
    String to = "2023-06-04T00:00:00Z";
    names("What did Maria start, as mentioned on 3 June, 2023?", from, to);
    names("what happened on the 3rd of June 2023", from, to);
    names("What did we agree on June 3, 2023?", from, to);
    names("notes from Jun. 3rd 2023", from, to);
    names("the call of 2023-06-03", from, to);
  }

  @Test
  void aMonthWithItsYearOrTheLatestOneBegun() {
    names("What did Gina sell in February 2023?", "2023-02-01T00:00:00Z", "2023-03-01T00:00:00Z");
    names("When did Melanie go camping in June?", "2023-06-01T00:00:00Z", "2023-07-01T00:00:00Z");
    // December has not begun by 20 August 2023: the latest December is 2022's.
    names("What did we ship in December?", "2022-12-01T00:00:00Z", "2023-01-01T00:00:00Z");
    names("plans for early May", "2023-05-01T00:00:00Z", "2023-06-01T00:00:00Z");
  }

  @Test
  void aYearAfterAWordThatMakesItOne() {
    names("Who did John meet in 2022?", "2022-01-01T00:00:00Z", "2023-01-01T00:00:00Z");
  }

  @Test
  void noTimeWhereNoneIsNamed() {
    assertThat(named("May I ask what Caroline researched?")).isEmpty();
    assertThat(named("What may have caused the outage?")).isEmpty();
    assertThat(named("How many tickets did the 2023 cohort close?")).isEmpty();
    assertThat(named("Where did John explore on a road trip last year?")).isEmpty();
    assertThat(named("What happened on 31 February, 2023?")).isEmpty();
    assertThat(named("the report of 2023-13-01")).isEmpty();
    assertThat(named("")).isEmpty();
  }
}
