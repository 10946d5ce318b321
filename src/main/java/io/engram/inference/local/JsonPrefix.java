package io.engram.inference.local;

import java.util.Arrays;

/**
 * The text generated so far in JSON mode, read as a prefix of one JSON object (RFC 8259): it
 * takes characters one at a time, refuses a character that no JSON object could continue with,
 * knows when the object is complete, and how many characters at least would complete it. Cheap
 * to copy, so a candidate token can be tried on a copy. Whitespace between tokens is taken, but
 * not two in a row (an untrained model would fill its budget with it).
 */
final class JsonPrefix {
  /** Where the reader is, between or inside tokens. */
  private enum At {
    START, // before the top-level object
    VALUE, // a value must come (after ':' or '[' or ',' in an array)
    VALUE_OR_CLOSE, // just after '[': a value or ']'
    KEY, // a key must come (after ',' in an object)
    KEY_OR_CLOSE, // just after '{': a key or '}'
    COLON, // after a key
    AFTER_VALUE, // after a value: ',' or the container's close
    STRING, // inside a string
    ESCAPE, // after a backslash inside a string
    UNICODE, // inside a \\uXXXX escape
    LITERAL, // inside true, false or null
    NUMBER, // inside a number
    DONE // the top-level object is closed
  }

  /** Number sub-states, as in the JSON grammar. */
  private enum Num {
    MINUS, // "-"
    ZERO, // "0" or "-0": only '.', 'e' or the end
    INT, // digits after a non-zero first digit
    DOT, // "1.": a digit must come
    FRACTION, // "1.5"
    EXP, // "1e": a sign or digit must come
    EXP_SIGN, // "1e+": a digit must come
    EXP_DIGITS // "1e5"
  }

  private At at = At.START;
  /** Open containers, innermost last: '{' or '['. */
  private char[] stack = new char[8];

  private int depth;
  /** Whether the string being read is an object's key. */
  private boolean key;

  private String literal;
  private int literalRead;
  private int unicodeRead;
  private Num num;
  private boolean lastWasSpace;

  JsonPrefix copy() {
    JsonPrefix copy = new JsonPrefix();
    copyTo(copy);
    return copy;
  }

  /** Makes {@code copy} this prefix (trying every token of a vocabulary allocates nothing). */
  void copyTo(JsonPrefix copy) {
    copy.at = at;
    if (copy.stack.length < depth) {
      copy.stack = new char[stack.length];
    }
    System.arraycopy(stack, 0, copy.stack, 0, depth);
    copy.depth = depth;
    copy.key = key;
    copy.literal = literal;
    copy.literalRead = literalRead;
    copy.unicodeRead = unicodeRead;
    copy.num = num;
    copy.lastWasSpace = lastWasSpace;
  }

  boolean complete() {
    return at == At.DONE;
  }

  /** Takes every character of {@code text}; false (and this prefix left broken) when one fails. */
  boolean accept(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (!accept(text.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  boolean accept(char c) {
    boolean space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    boolean inside = at == At.STRING || at == At.ESCAPE || at == At.UNICODE;
    if (space && !inside && at != At.LITERAL && at != At.NUMBER) {
      boolean ok = at != At.DONE && !lastWasSpace;
      lastWasSpace = true;
      return ok;
    }
    lastWasSpace = false;
    return switch (at) {
      case START -> c == '{' && open('{');
      case VALUE -> value(c);
      case VALUE_OR_CLOSE -> c == ']' ? close('[') : value(c);
      case KEY -> c == '"' && startString(true);
      case KEY_OR_CLOSE -> c == '}' ? close('{') : c == '"' && startString(true);
      case COLON -> c == ':' && to(At.VALUE);
      case AFTER_VALUE -> afterValue(c);
      case STRING -> string(c);
      case ESCAPE -> escape(c);
      case UNICODE -> unicode(c);
      case LITERAL -> literal(c);
      case NUMBER -> number(c);
      case DONE -> false;
    };
  }

  /**
   * The shortest text that completes the object from here: what the token being read owes (a
   * string's quote, a literal's rest, a number's digit, a key's {@code :0}, a value "0"), then the
   * close of every open container.
   */
  String completion() {
    String owed = switch (at) {
      case START -> "{";
      case DONE, VALUE_OR_CLOSE, KEY_OR_CLOSE, AFTER_VALUE -> "";
      case VALUE -> "0";
      case KEY -> "\"\":0";
      case COLON -> ":0";
      case STRING -> "\"" + (key ? ":0" : "");
      case ESCAPE -> "n\"" + (key ? ":0" : "");
      case UNICODE -> "0".repeat(4 - unicodeRead) + "\"" + (key ? ":0" : "");
      case LITERAL -> literal.substring(literalRead);
      case NUMBER ->
        num == Num.MINUS || num == Num.DOT || num == Num.EXP || num == Num.EXP_SIGN ? "0" : "";
    };
    StringBuilder text = new StringBuilder(owed);
    for (int i = depth - 1; i >= 0; i--) {
      text.append(stack[i] == '{' ? '}' : ']');
    }
    return at == At.START ? text.append('}').toString() : text.toString();
  }

  private boolean to(At next) {
    at = next;
    return true;
  }

  private boolean value(char c) {
    if (c == '{' || c == '[') {
      return open(c);
    }
    if (c == '"') {
      return startString(false);
    }
    if (c == 't' || c == 'f' || c == 'n') {
      literal = c == 't' ? "true" : c == 'f' ? "false" : "null";
      literalRead = 1;
      return to(At.LITERAL);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      num = c == '-' ? Num.MINUS : c == '0' ? Num.ZERO : Num.INT;
      return to(At.NUMBER);
    }
    return false;
  }

  private boolean open(char c) {
    if (depth == stack.length) {
      stack = Arrays.copyOf(stack, depth * 2);
    }
    stack[depth++] = c;
    return to(c == '{' ? At.KEY_OR_CLOSE : At.VALUE_OR_CLOSE);
  }

  private boolean close(char opener) {
    if (depth == 0 || stack[depth - 1] != opener) {
      return false;
    }
    depth--;
    return to(depth == 0 ? At.DONE : At.AFTER_VALUE);
  }

  private boolean startString(boolean isKey) {
    key = isKey;
    return to(At.STRING);
  }

  private boolean afterValue(char c) {
    char container = stack[depth - 1];
    if (c == ',') {
      return to(container == '{' ? At.KEY : At.VALUE);
    }
    return (c == '}' || c == ']') && close(c == '}' ? '{' : '[');
  }

  private boolean string(char c) {
    if (c == '"') {
      return to(key ? At.COLON : At.AFTER_VALUE);
    }
    if (c == '\\') {
      return to(At.ESCAPE);
    }
    return c >= 0x20; // control characters must be escaped
  }

  private boolean escape(char c) {
    if (c == 'u') {
      unicodeRead = 0;
      return to(At.UNICODE);
    }
    return "\"\\/bfnrt".indexOf(c) >= 0 && to(At.STRING);
  }

  private boolean unicode(char c) {
    if (Character.digit(c, 16) < 0) {
      return false;
    }
    return ++unicodeRead < 4 || to(At.STRING);
  }

  private boolean literal(char c) {
    if (literal.charAt(literalRead) != c) {
      return false;
    }
    return ++literalRead < literal.length() || to(At.AFTER_VALUE);
  }

  private boolean number(char c) {
    boolean digit = c >= '0' && c <= '9';
    Num next = switch (num) {
      case MINUS -> digit ? (c == '0' ? Num.ZERO : Num.INT) : null;
      case ZERO -> c == '.' ? Num.DOT : c == 'e' || c == 'E' ? Num.EXP : null;
      case INT -> digit ? Num.INT : c == '.' ? Num.DOT : c == 'e' || c == 'E' ? Num.EXP : null;
      case DOT, FRACTION ->
        digit ? Num.FRACTION : num == Num.FRACTION && (c == 'e' || c == 'E') ? Num.EXP : null;
      case EXP -> digit ? Num.EXP_DIGITS : c == '+' || c == '-' ? Num.EXP_SIGN : null;
      case EXP_SIGN, EXP_DIGITS -> digit ? Num.EXP_DIGITS : null;
    };
    if (next != null) {
      num = next;
      return true;
    }
    if (num == Num.MINUS || num == Num.DOT || num == Num.EXP || num == Num.EXP_SIGN) {
      return false; // the number is not whole yet
    }
    // The number ended: the character belongs to what follows it.
    at = At.AFTER_VALUE;
    return accept(c);
  }
}
