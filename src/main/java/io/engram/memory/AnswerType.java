package io.engram.memory;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The kind of answer a question asks for, told by how it opens, and whether a memory's text holds
 * one: "how long" asks for a duration ("I've known these friends for 4 years"), "how often" for a
 * frequency ("three times a week"), "how many" for a number, "why" for a reason ("I chose them
 * 'cause they help..."), "when" for a time ("last week", "2 days ago", a year). The question's
 * words say what it is about; the answer's kind is what those words rarely share with the turn
 * that answers it. Classic question answering's answer-type check, without a language model.
 * Questions that open otherwise ("what", "who", "how did") ask for no kind this can tell.
 */
enum AnswerType {
  DURATION(
      "how long",
      "\\b(\\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|few|several|couple of|many)"
          + "\\s+(minutes?|hours?|days?|weeks?|months?|years?|decades?)\\b"),
  FREQUENCY(
      "how often",
      "\\b((once|twice|\\w+ times)\\s+(a|an|per|every)\\s+(day|week|month|year)"
          + "|(every|each)\\s+(day|week|weekend|month|morning|night|evening|year)"
          + "|daily|weekly|monthly|yearly|annually)\\b"),
  COUNT("how many", "\\b(\\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\\b"),
  REASON(
      "why",
      "(\\bbecause\\b|'cause\\b|\\bso that\\b|\\bthat's why\\b|\\bthe reason\\b|\\bmade me\\b"
          + "|\\bsince\\b)"),
  TIME(
      "when",
      "\\b(yesterday|today|tonight"
          + "|last (week|month|year|weekend|night|monday|tuesday|wednesday|thursday|friday"
          + "|saturday|sunday)"
          + "|(an?|one|two|three|few|\\d+) (days?|weeks?|months?|years?) ago"
          + "|this (week|month|year|morning|weekend)|\\d{4})\\b");

  private final String opening;
  private final Pattern answer;

  AnswerType(String opening, String answer) {
    this.opening = opening + " ";
    this.answer = Pattern.compile(answer);
  }

  /** The kind of answer the question asks for, if its opening tells one. */
  static Optional<AnswerType> askedBy(String question) {
    String opening = question.stripLeading().toLowerCase(Locale.ROOT);
    for (AnswerType type : values()) {
      if (opening.startsWith(type.opening)) {
        return Optional.of(type);
      }
    }
    return Optional.empty();
  }

  /** Whether the text holds an answer of this kind. */
  boolean answeredIn(String text) {
    return answer.matcher(text.toLowerCase(Locale.ROOT)).find();
  }
}
