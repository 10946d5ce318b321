package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The kind of answer a question asks for, and the texts that hold one (and those that do not). */
class AnswerTypeTest {

  @Test
  void aQuestionsOpeningTellsTheKindOfAnswer() {
    assertThat(AnswerType.askedBy("How long has Caroline had her friends?"))
        .contains(AnswerType.DURATION);
    assertThat(AnswerType.askedBy("  how often does John work out?"))
        .contains(AnswerType.FREQUENCY);
    assertThat(AnswerType.askedBy("How many children does Melanie have?"))
        .contains(AnswerType.COUNT);
    assertThat(AnswerType.askedBy("Why did Caroline choose the agency?"))
        .contains(AnswerType.REASON);
    assertThat(AnswerType.askedBy("When did Maria meet Jean?")).contains(AnswerType.TIME);
    assertThat(AnswerType.askedBy("What did Jon say about the store?")).isEmpty();
    assertThat(AnswerType.askedBy("How did Melanie feel?")).isEmpty();
    assertThat(AnswerType.askedBy("Whenever it rains we stay in")).isEmpty();
    assertThat(AnswerType.askedBy("")).isEmpty();
  }

  @Test
  void aTextHoldsAnAnswerOfAKindOrNot() {
    assertThat(AnswerType.DURATION.answeredIn("I've known these friends for 4 years"))
        .isTrue();
    assertThat(AnswerType.DURATION.answeredIn("It took a couple of weeks")).isTrue();
    assertThat(AnswerType.DURATION.answeredIn("My hair is long these years")).isFalse();
    assertThat(AnswerType.FREQUENCY.answeredIn("Three times a week; it keeps us on track."))
        .isTrue();
    assertThat(AnswerType.FREQUENCY.answeredIn("We run every morning")).isTrue();
    assertThat(AnswerType.FREQUENCY.answeredIn("We ran a marathon")).isFalse();
    assertThat(AnswerType.COUNT.answeredIn("We have three kids")).isTrue();
    assertThat(AnswerType.COUNT.answeredIn("We have kids")).isFalse();
    assertThat(AnswerType.REASON.answeredIn("I chose them 'cause they help LGBTQ+ folks"))
        .isTrue();
    assertThat(AnswerType.REASON.answeredIn("Because it rained")).isTrue();
    assertThat(AnswerType.REASON.answeredIn("I chose them")).isFalse();
    assertThat(AnswerType.TIME.answeredIn("We went camping last week")).isTrue();
    assertThat(AnswerType.TIME.answeredIn("I adopted him 3 years ago")).isTrue();
    assertThat(AnswerType.TIME.answeredIn("We went camping")).isFalse();
  }
}
