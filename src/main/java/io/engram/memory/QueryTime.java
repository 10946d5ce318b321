package io.engram.memory;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.Month;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The time a question names, read without a language model: a day ("on 3 June, 2023", "June 3,
 * 2023", "2023-06-03"), a month ("in June 2023", or "in June": the latest June that has begun by
 * now) or a year ("in 2022"). Retrieval then prefers memories that occurred then ({@link
 * ActivationRanker}) and looks for candidates within it. Relative words ("last year") are left
 * alone: a question's "last year" and a memory's are not the same year.
 *
 * <p>Dates carry no zone: a day is taken as the UTC day widened by {@link #ZONES} on each side, so
 * it holds wherever the memory's time was written.
 */
final class QueryTime {
  /** The widest offset of a time zone from UTC: what a named day is widened by on each side. */
  static final Duration ZONES = Duration.ofHours(14);

  private static final String MONTH =
      "(january|february|march|april|may|june|july|august|september|october|november|december"
          + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\\.?";
  private static final String DAY = "(\\d{1,2})(?:st|nd|rd|th)?";
  private static final String YEAR = "((?:19|20)\\d\\d)";
  private static final Pattern DAY_MONTH_YEAR =
      Pattern.compile("\\b" + DAY + "\\s+(?:of\\s+)?" + MONTH + ",?\\s+" + YEAR + "\\b");
  private static final Pattern MONTH_DAY_YEAR =
      Pattern.compile("\\b" + MONTH + "\\s+" + DAY + ",?\\s+" + YEAR + "\\b");
  private static final Pattern ISO_DAY = Pattern.compile("\\b" + YEAR + "-(\\d\\d)-(\\d\\d)\\b");
  private static final Pattern MONTH_YEAR =
      Pattern.compile("\\b" + MONTH + ",?\\s+" + YEAR + "\\b");
  /** A month alone only after a word that makes it one: "may" is a verb more often. */
  private static final Pattern MONTH_ALONE =
      Pattern.compile("\\b(?:in|during|since|of|on|early|late|mid)\\s+" + MONTH + "\\b");

  private static final Pattern YEAR_ALONE =
      Pattern.compile("\\b(?:in|during|of|since)\\s+" + YEAR + "\\b");

  /**
   * From (inclusive) to (exclusive), and the query's other words: the date's own ("3", "june")
   * would otherwise match memories that mention a 3 or a June, whenever they occurred.
   */
  record Range(Instant from, Instant to, String otherWords) {
    boolean contains(Instant at) {
      return at != null && !at.isBefore(from) && at.isBefore(to);
    }
  }

  private QueryTime() {}

  /** The time the query names, the most precise first; empty when it names none. */
  static Optional<Range> named(String query, Instant now) {
    String text = query.toLowerCase(Locale.ROOT);
    Matcher m = DAY_MONTH_YEAR.matcher(text);
    if (m.find()) {
      return day(year(m.group(3)), month(m.group(2)), m.group(1)).map(without(text, m));
    }
    m = MONTH_DAY_YEAR.matcher(text);
    if (m.find()) {
      return day(year(m.group(3)), month(m.group(1)), m.group(2)).map(without(text, m));
    }
    m = ISO_DAY.matcher(text);
    if (m.find()) {
      int month = Integer.parseInt(m.group(2));
      return month < 1 || month > 12
          ? Optional.empty()
          : day(year(m.group(1)), Month.of(month), m.group(3)).map(without(text, m));
    }
    m = MONTH_YEAR.matcher(text);
    if (m.find()) {
      YearMonth month = YearMonth.of(year(m.group(2)), month(m.group(1)));
      return Optional.of(
          without(text, m).apply(widened(month.atDay(1), month.plusMonths(1).atDay(1))));
    }
    m = MONTH_ALONE.matcher(text);
    if (m.find()) {
      LocalDate today = LocalDate.ofInstant(now, ZoneOffset.UTC);
      YearMonth month = YearMonth.of(today.getYear(), month(m.group(1)));
      if (month.atDay(1).isAfter(today)) {
        month = month.minusYears(1);
      }
      return Optional.of(
          without(text, m).apply(widened(month.atDay(1), month.plusMonths(1).atDay(1))));
    }
    m = YEAR_ALONE.matcher(text);
    if (m.find()) {
      int year = year(m.group(1));
      return Optional.of(
          without(text, m).apply(widened(LocalDate.of(year, 1, 1), LocalDate.of(year + 1, 1, 1))));
    }
    return Optional.empty();
  }

  private static Optional<Range> day(int year, Month month, String day) {
    int d = Integer.parseInt(day);
    if (d < 1 || d > month.length(java.time.Year.isLeap(year))) {
      return Optional.empty();
    }
    LocalDate date = LocalDate.of(year, month, d);
    return Optional.of(widened(date, date.plusDays(1)));
  }

  private static Range widened(LocalDate from, LocalDate to) {
    return new Range(
        from.atStartOfDay(ZoneOffset.UTC).toInstant().minus(ZONES),
        to.atStartOfDay(ZoneOffset.UTC).toInstant().plus(ZONES),
        null);
  }

  /** The range with the query's words other than the date {@code m} found in {@code text}. */
  private static java.util.function.UnaryOperator<Range> without(String text, Matcher m) {
    String others = (text.substring(0, m.start()) + " " + text.substring(m.end()))
        .replaceAll("\\s+", " ")
        .strip();
    return range -> new Range(range.from(), range.to(), others);
  }

  private static int year(String text) {
    return Integer.parseInt(text);
  }

  private static Month month(String name) {
    String key = name.replace(".", "");
    for (Month month : Month.values()) {
      if (month.name().toLowerCase(Locale.ROOT).startsWith(key)) {
        return month;
      }
    }
    throw new IllegalArgumentException("not a month: " + name);
  }
}
