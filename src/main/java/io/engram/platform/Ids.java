package io.engram.platform;

import java.security.SecureRandom;

/**
 * Identifiers such as {@code org_01jd2x...}: a type prefix, then a ULID-style body (48-bit
 * millisecond time + 80 random bits in Crockford base32) so ids sort by creation time.
 */
public final class Ids {
  private static final char[] ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ids() {
  }

  public static String newId(String prefix, long epochMillis) {
    char[] body = new char[26];
    long time = epochMillis;
    for (int i = 9; i >= 0; i--) {
      body[i] = ALPHABET[(int) (time & 31)];
      time >>>= 5;
    }
    byte[] random = new byte[16];
    RANDOM.nextBytes(random);
    for (int i = 10; i < 26; i++) {
      body[i] = ALPHABET[random[i - 10] & 31];
    }
    return prefix + "_" + new String(body);
  }

  /** True for a string that could be an id of this prefix; lets routes answer 404 before querying. */
  public static boolean looksLike(String prefix, String id) {
    return id != null && id.length() == prefix.length() + 27 && id.startsWith(prefix + "_")
        && id.substring(prefix.length() + 1).chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'));
  }
}
