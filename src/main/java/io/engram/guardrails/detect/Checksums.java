package io.engram.guardrails.detect;

import java.util.Map;

/** The check digits that make a run of digits a payment card or an IBAN, not any number. */
final class Checksums {
  /**
   * Each country's IBAN length (ISO 13616 registry): a string of the right shape but the wrong
   * length for its country is not an IBAN, whatever its check digits.
   */
  private static final Map<String, Integer> IBAN_LENGTHS = Map.ofEntries(
      Map.entry("AD", 24),
      Map.entry("AE", 23),
      Map.entry("AL", 28),
      Map.entry("AT", 20),
      Map.entry("AZ", 28),
      Map.entry("BA", 20),
      Map.entry("BE", 16),
      Map.entry("BG", 22),
      Map.entry("BH", 22),
      Map.entry("BR", 29),
      Map.entry("BY", 28),
      Map.entry("CH", 21),
      Map.entry("CR", 22),
      Map.entry("CY", 28),
      Map.entry("CZ", 24),
      Map.entry("DE", 22),
      Map.entry("DK", 18),
      Map.entry("DO", 28),
      Map.entry("EE", 20),
      Map.entry("EG", 29),
      Map.entry("ES", 24),
      Map.entry("FI", 18),
      Map.entry("FO", 18),
      Map.entry("FR", 27),
      Map.entry("GB", 22),
      Map.entry("GE", 22),
      Map.entry("GI", 23),
      Map.entry("GL", 18),
      Map.entry("GR", 27),
      Map.entry("GT", 28),
      Map.entry("HR", 21),
      Map.entry("HU", 28),
      Map.entry("IE", 22),
      Map.entry("IL", 23),
      Map.entry("IQ", 23),
      Map.entry("IS", 26),
      Map.entry("IT", 27),
      Map.entry("JO", 30),
      Map.entry("KW", 30),
      Map.entry("KZ", 20),
      Map.entry("LB", 28),
      Map.entry("LC", 32),
      Map.entry("LI", 21),
      Map.entry("LT", 20),
      Map.entry("LU", 20),
      Map.entry("LV", 21),
      Map.entry("MC", 27),
      Map.entry("MD", 24),
      Map.entry("ME", 22),
      Map.entry("MK", 19),
      Map.entry("MR", 27),
      Map.entry("MT", 31),
      Map.entry("MU", 30),
      Map.entry("NL", 18),
      Map.entry("NO", 15),
      Map.entry("PK", 24),
      Map.entry("PL", 28),
      Map.entry("PS", 29),
      Map.entry("PT", 25),
      Map.entry("QA", 29),
      Map.entry("RO", 24),
      Map.entry("RS", 22),
      Map.entry("SA", 24),
      Map.entry("SC", 31),
      Map.entry("SE", 24),
      Map.entry("SI", 19),
      Map.entry("SK", 24),
      Map.entry("SM", 27),
      Map.entry("ST", 25),
      Map.entry("SV", 28),
      Map.entry("TL", 23),
      Map.entry("TN", 24),
      Map.entry("TR", 26),
      Map.entry("UA", 29),
      Map.entry("VA", 22),
      Map.entry("VG", 24),
      Map.entry("XK", 20));

  private Checksums() {}

  /** The Luhn check over the digits of {@code text} (other characters skipped). */
  static boolean luhn(CharSequence text) {
    int sum = 0;
    boolean doubled = false;
    int digits = 0;
    for (int i = text.length() - 1; i >= 0; i--) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        continue;
      }
      int d = c - '0';
      if (doubled) {
        d *= 2;
        if (d > 9) {
          d -= 9;
        }
      }
      sum += d;
      doubled = !doubled;
      digits++;
    }
    return digits > 0 && sum % 10 == 0;
  }

  /**
   * Whether {@code text} (spaces skipped, letters upper case) is an IBAN: its country's length and
   * ISO 7064 mod 97-10 over the rearranged characters equal to 1.
   */
  static boolean iban(CharSequence text) {
    StringBuilder compact = new StringBuilder(34);
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c != ' ') {
        compact.append(Character.toUpperCase(c));
      }
    }
    if (compact.length() < 4) {
      return false;
    }
    Integer length = IBAN_LENGTHS.get(compact.substring(0, 2));
    if (length == null || length != compact.length()) {
      return false;
    }
    String rearranged = compact.substring(4) + compact.substring(0, 4);
    int remainder = 0;
    for (int i = 0; i < rearranged.length(); i++) {
      char c = rearranged.charAt(i);
      int value;
      if (c >= '0' && c <= '9') {
        value = c - '0';
        remainder = (remainder * 10 + value) % 97;
      } else if (c >= 'A' && c <= 'Z') {
        value = c - 'A' + 10;
        remainder = (remainder * 100 + value) % 97;
      } else {
        return false;
      }
    }
    return remainder == 1;
  }
}
