package io.engram.platform;

/**
 * What counts as text, as opposed to empty: at least one letter, digit, punctuation mark, symbol or
 * private-use character. White space of every kind, control and format characters (zero-width
 * space, byte-order mark, tag characters), combining marks with no letter to sit on, surrogates and
 * unassigned code points are not text: a string of only those is empty, whatever its length. A
 * memory, a query or an embedding input that is empty in this sense has nothing to embed.
 */
public final class VisibleText {

  private VisibleText() {}

  public static boolean isEmpty(String text) {
    return text.codePoints().noneMatch(VisibleText::isVisible);
  }

  /**
   * Whether every character of {@code text} is visible: what a name people read, type and compare
   * (a model's id) may hold. White space, control and format characters (a bidirectional override
   * such as U+202E shows a name other than the one stored) and unassigned code points are not.
   */
  public static boolean isAllVisible(String text) {
    return text.codePoints().allMatch(VisibleText::isVisible);
  }

  private static boolean isVisible(int codePoint) {
    return switch (Character.getType(codePoint)) {
      case Character.UPPERCASE_LETTER,
          Character.LOWERCASE_LETTER,
          Character.TITLECASE_LETTER,
          Character.MODIFIER_LETTER,
          Character.OTHER_LETTER,
          Character.DECIMAL_DIGIT_NUMBER,
          Character.LETTER_NUMBER,
          Character.OTHER_NUMBER,
          Character.CONNECTOR_PUNCTUATION,
          Character.DASH_PUNCTUATION,
          Character.START_PUNCTUATION,
          Character.END_PUNCTUATION,
          Character.INITIAL_QUOTE_PUNCTUATION,
          Character.FINAL_QUOTE_PUNCTUATION,
          Character.OTHER_PUNCTUATION,
          Character.MATH_SYMBOL,
          Character.CURRENCY_SYMBOL,
          Character.MODIFIER_SYMBOL,
          Character.OTHER_SYMBOL,
          Character.PRIVATE_USE -> true;
      default -> false;
    };
  }
}
