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

  /**
   * A deterministic id for {@code seed}: {@code prefix}, the time {@code epochMillis} (so it sorts
   * as an id made then would), then 80 bits of the seed's SHA-256 in place of random ones. The
   * same seed always gives the same id: what lets an import run again without writing twice.
   */
  public static String derived(String prefix, long epochMillis, String seed) {
    char[] body = new char[BODY_CHARS];
    long time = epochMillis;
    for (int i = TIME_CHARS - 1; i >= 0; i--) {
      body[i] = ALPHABET[(int) (time & 31)];
      time >>>= 5;
    }
    byte[] hash = java.util.HexFormat.of().parseHex(Digests.sha256(seed));
    for (int i = TIME_CHARS; i < BODY_CHARS; i++) {
      body[i] = ALPHABET[hash[i - TIME_CHARS] & 31];
    }
    return prefix + "_" + new String(body);
  }

  /** {@code id}'s time with 80 bits of {@code seed}'s hash: the same id, deterministically renamed. */
  public static String renamed(String id, String seed) {
    int body = id.indexOf('_') + 1;
    String renamed = derived(id.substring(0, body - 1), 0, seed);
    return id.substring(0, body + TIME_CHARS) + renamed.substring(body + TIME_CHARS);
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
