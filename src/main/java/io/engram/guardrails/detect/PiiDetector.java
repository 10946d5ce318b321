package io.engram.guardrails.detect;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Personal data: e-mail addresses, phone numbers (E.164 and the common national forms, with their
 * separators: a bare run of digits is not taken for a phone, nor the tail of a longer run of
 * digit groups), payment cards (a known issuer's prefix, 13 to 19 digits in groups or 15 to 16
 * without, Luhn), IBANs (the country's length, mod 97), US social security numbers
 * (the ranges the SSA issues) and IP addresses (v4 and v6, each part in range).
 */
public final class PiiDetector implements Detector {
  public static final String EMAIL = "email";
  public static final String PHONE = "phone";
  public static final String PAYMENT_CARD = "payment_card";
  public static final String IBAN = "iban";
  public static final String US_SSN = "us_ssn";
  public static final String IP_ADDRESS = "ip_address";

  /** Every entity, in the order findings of the same span are preferred. */
  public static final List<String> ENTITIES =
      List.of(EMAIL, PAYMENT_CARD, IBAN, US_SSN, PHONE, IP_ADDRESS);

  /** The shape of a US social security number, which a national phone number is not taken for. */
  private static final Pattern SSN_SHAPE = Pattern.compile("\\d{3}-\\d{2}-\\d{4}");

  private static final String OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";

  private static final Map<String, List<PatternRule>> RULES = rules();

  private final Set<String> entities;

  /** Looks for {@code entities} (all of {@link #ENTITIES} when empty). */
  public PiiDetector(Set<String> entities) {
    this.entities = entities.isEmpty() ? Set.copyOf(ENTITIES) : Set.copyOf(entities);
  }

  private static Map<String, List<PatternRule>> rules() {
    Map<String, List<PatternRule>> rules = new LinkedHashMap<>();
    rules.put(
        EMAIL,
        List.of(PatternRule.of(
                EMAIL,
                "(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
                    + "(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.){1,8}[A-Za-z]{2,24}"
                    + "(?![A-Za-z0-9-])")
            .within(PatternRule.around("@", 64, 260))));
    rules.put(
        PAYMENT_CARD,
        List.of(PatternRule.of(PAYMENT_CARD, "(?<![\\d-])(?:\\d[ -]?){12,18}\\d(?![\\d-])")
            .checkedBy(PiiDetector::paymentCard)
            .within(PatternRule.digitRuns(13))));
    rules.put(
        US_SSN,
        List.of(PatternRule.of(
                US_SSN,
                "(?<![\\d-])(?!000|666|9\\d\\d)\\d{3}([- ])(?!00)\\d{2}\\1(?!0000)\\d{4}(?![\\d-])")
            .within(PatternRule.digitRuns(9))));
    rules.put(
        PHONE,
        List.of(
            // E.164 as written: a plus, the country code, groups with at most one separator.
            PatternRule.of(PHONE, "(?<![\\w+])\\+[1-9](?:[ .-]?\\(?\\d{1,4}\\)?){2,7}(?![\\w])")
                .checkedBy(text -> between(PatternRule.digits(text), 8, 15))
                .within(PatternRule.digitRuns(8)),
            // North American: (415) 555-0134, 415-555-0134, 415.555.0134.
            PatternRule.of(
                    PHONE,
                    "(?<![\\w.+-])(?<!\\d[ -])(?:\\(\\d{3}\\) ?|\\d{3}[.-])\\d{3}[.-]\\d{4}(?![\\w-])")
                .within(PatternRule.digitRuns(10)),
            // A trunk prefix 0 and grouped digits: 06 12 34 56 78, 020 7946 0958, 030/1234567.
            PatternRule.of(
                    PHONE, "(?<![\\w.+/-])(?<!\\d[ -])0\\d{1,4}(?:[ /-]\\d{2,8}){1,4}(?![\\w/-])")
                .checkedBy(text -> between(PatternRule.digits(text), 9, 12)
                    // the shape of a social security number is not taken for a phone
                    && !SSN_SHAPE.matcher(text).matches())
                .within(PatternRule.digitRuns(9))));
    rules.put(
        IP_ADDRESS,
        List.of(
            PatternRule.of(
                    IP_ADDRESS,
                    "(?<![\\w.])" + OCTET + "(?:\\." + OCTET + "){3}(?!\\.?\\d)(?![\\w])")
                .within(PatternRule.digitRuns(4)),
            PatternRule.of(
                    IP_ADDRESS, "(?<![\\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\\w:])")
                .checkedBy(PiiDetector::ipv6)
                // "::", or the seven colons of a full address
                .onlyWhere(text ->
                    text.contains("::") || text.chars().filter(c -> c == ':').count() >= 7)));
    return rules;
  }

  /**
   * An email's local part (64), its at sign and domain (260) and the look-behind before it; the
   * other entities are shorter (an IBAN with its spaces, 42; an IPv6 address, 39).
   */
  @Override
  public int reach() {
    return entities.contains(EMAIL) ? 64 + 1 + 260 + 1 : 64;
  }

  @Override
  public List<Finding> find(String text) {
    List<Finding> found = new ArrayList<>();
    for (String entity : ENTITIES) {
      if (!entities.contains(entity)) {
        continue;
      }
      if (entity.equals(IBAN)) {
        ibans(text, found);
      } else {
        RULES.get(entity).forEach(rule -> rule.findIn(text, found));
      }
    }
    return Findings.disjoint(found);
  }

  private static void ibans(String text, List<Finding> into) {
    int start = 0;
    while (start + 4 <= text.length()) {
      if (!ibanStart(text, start)) {
        start++;
        continue;
      }
      // Walked to the country's length, spaces allowed between characters: a longer run after it
      // is not part of it, and the check digits decide.
      int compact = 4;
      int i = start + 4;
      while (i < text.length() && compact < 34) {
        char c = text.charAt(i);
        if (c == ' ' && i + 1 < text.length() && isIbanChar(text.charAt(i + 1))) {
          i++;
          continue;
        }
        if (!isIbanChar(c)) {
          break;
        }
        compact++;
        i++;
        if (Checksums.iban(text.substring(start, i))
            && (i == text.length() || !Character.isLetterOrDigit(text.charAt(i)))) {
          into.add(new Finding(IBAN, start, i));
          break;
        }
      }
      start += 4; // the next start is after these four characters
    }
  }

  /**
   * An IBAN's start at {@code at}: a country's two capitals and two check digits, after no letter
   * or digit. A hand scan: a regex's look-behind tried at every position of a prompt costs a
   * hundred microseconds a 4 KB prompt.
   */
  private static boolean ibanStart(String text, int at) {
    char first = text.charAt(at);
    if (first < 'A' || first > 'Z') {
      return false;
    }
    char second = text.charAt(at + 1);
    char third = text.charAt(at + 2);
    char fourth = text.charAt(at + 3);
    if (second < 'A'
        || second > 'Z'
        || third < '0'
        || third > '9'
        || fourth < '0'
        || fourth > '9') {
      return false;
    }
    if (at == 0) {
      return true;
    }
    char before = text.charAt(at - 1);
    return !((before >= 'A' && before <= 'Z')
        || (before >= 'a' && before <= 'z')
        || (before >= '0' && before <= '9'));
  }

  private static boolean isIbanChar(char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
  }

  private static boolean between(int value, int least, int most) {
    return value >= least && value <= most;
  }

  /** A known issuer's prefix, 13 to 19 digits, one kind of separator at most, and Luhn. */
  static boolean paymentCard(String text) {
    if (text.contains(" ") && text.contains("-")) {
      return false;
    }
    StringBuilder kept = new StringBuilder(text.length());
    text.chars().filter(c -> c != ' ' && c != '-').forEach(c -> kept.append((char) c));
    String digits = kept.toString();
    // Written without separators, a card is 15 (American Express) or 16 digits: a longer or
    // shorter run is an order or tracking number far more often than one of the rare lengths.
    boolean grouped = digits.length() != text.length();
    if (!between(digits.length(), grouped ? 13 : 15, grouped ? 19 : 16)
        || !Checksums.luhn(digits)) {
      return false;
    }
    int two = Integer.parseInt(digits.substring(0, 2));
    int four = Integer.parseInt(digits.substring(0, 4));
    int three = four / 10;
    return digits.charAt(0) == '4' // Visa
        || between(two, 51, 55)
        || between(four, 2221, 2720) // Mastercard
        || two == 34
        || two == 37 // American Express
        || four == 6011
        || two == 65
        || between(three, 644, 649) // Discover
        || between(four, 3528, 3589) // JCB
        || between(three, 300, 305)
        || two == 36
        || two == 38
        || two == 39 // Diners
        || two == 62 // UnionPay
        || two == 50
        || between(two, 56, 69); // Maestro
  }

  /** Eight groups, or fewer around one "::"; each group one to four hex digits. */
  static boolean ipv6(String text) {
    int doubled = text.indexOf("::");
    if (doubled != text.lastIndexOf("::") || text.contains(":::")) {
      return false;
    }
    String[] groups = text.split(":", -1);
    int filled = 0;
    for (String group : groups) {
      if (group.length() > 4) {
        return false;
      }
      filled += group.isEmpty() ? 0 : 1;
    }
    if (doubled < 0) {
      return groups.length == 8 && filled == 8;
    }
    return filled >= 2 && filled <= 7;
  }
}
