package io.engram.platform;

import java.security.SecureRandom;

/**
 * Identifiers such as {@code org_01jd2x...}: a type prefix, then a ULID-style body (48-bit
 * millisecond time + 80 random bits in Crockford base32) so ids sort by creation time. Within
 * one process ids are strictly increasing: an id made in the same millisecond as the previous
 * one (or with a clock that went back) is the previous one plus one.
 */
public final class Ids {
  private static final char[] ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz".toCharArray();
  private static final int TIME_CHARS = 10;
  private static final int BODY_CHARS = 26;
  private static final SecureRandom RANDOM = new SecureRandom();

  private static long lastMillis = -1;
  private static final int[] LAST = new int[BODY_CHARS];

  private Ids() {}

  public static String newId(String prefix, long epochMillis) {
    char[] body = new char[BODY_CHARS];
    synchronized (LAST) {
      if (epochMillis > lastMillis) {
        lastMillis = epochMillis;
        long time = epochMillis;
        for (int i = TIME_CHARS - 1; i >= 0; i--) {
          LAST[i] = (int) (time & 31);
          time >>>= 5;
        }
        for (int i = TIME_CHARS; i < BODY_CHARS; i++) {
          LAST[i] = RANDOM.nextInt(32);
        }
      } else {
        increment();
      }
      for (int i = 0; i < BODY_CHARS; i++) {
        body[i] = ALPHABET[LAST[i]];
      }
    }
    return prefix + "_" + new String(body);
  }

  private static void increment() {
    for (int i = BODY_CHARS - 1; i >= 0; i--) {
      if (++LAST[i] < 32) {
        return;
      }
      LAST[i] = 0;
    }
  }
}
