package io.engram.budgets;

import java.math.BigDecimal;

/** Amounts in billionths of a US dollar, as the API writes and reads them. */
final class Money {
  private static final long NANOS_PER_DOLLAR = 1_000_000_000L;

  private Money() {}

  /** Dollars as a JSON number (exact to the billionth within a double's digits). */
  static double number(long nanos) {
    return nanos / (double) NANOS_PER_DOLLAR;
  }

  /** Dollars read from the API, to the nearest billionth. */
  static long nanos(double dollars) {
    return Math.round(dollars * NANOS_PER_DOLLAR);
  }

  /** For messages: "$1.25", "$0.000042". */
  static String dollars(long nanos) {
    return "$" + BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString();
  }
}
