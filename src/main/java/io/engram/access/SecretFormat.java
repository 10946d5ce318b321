package io.engram.access;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.zip.CRC32;

/**
 * The shape of every secret Engram issues: {@code <prefix>_<32 random base62><6 base62 CRC32>}.
 * The fixed prefix names the kind (so a leaked secret is recognizable by scanners) and the
 * checksum lets a typo or a forgery be refused without a database lookup. Secrets carry 190 bits
 * of randomness, so a single SHA-256 is the right storage hash: slow password hashes protect
 * guessable inputs, which these are not.
 */
public final class SecretFormat {
  private static final String BASE62 =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  private static final int RANDOM_LENGTH = 32;
  private static final int CHECKSUM_LENGTH = 6;
  private static final SecureRandom RANDOM = new SecureRandom();

  private SecretFormat() {}

  public static String generate(String prefix) {
    StringBuilder body = new StringBuilder(RANDOM_LENGTH + CHECKSUM_LENGTH);
    for (int i = 0; i < RANDOM_LENGTH; i++) {
      body.append(BASE62.charAt(RANDOM.nextInt(BASE62.length())));
    }
    body.append(checksum(body));
    return prefix + "_" + body;
  }

  /** True when the secret has this prefix, the right length and alphabet, and a matching checksum. */
  public static boolean isWellFormed(String prefix, String secret) {
    if (secret == null
        || !secret.startsWith(prefix + "_")
        || secret.length() != prefix.length() + 1 + RANDOM_LENGTH + CHECKSUM_LENGTH) {
      return false;
    }
    String body = secret.substring(prefix.length() + 1);
    if (!body.chars().allMatch(c -> BASE62.indexOf(c) >= 0)) {
      return false;
    }
    return checksum(body.substring(0, RANDOM_LENGTH)).equals(body.substring(RANDOM_LENGTH));
  }

  private static String checksum(CharSequence randomPart) {
    CRC32 crc = new CRC32();
    crc.update(randomPart.toString().getBytes(StandardCharsets.US_ASCII));
    long value = crc.getValue();
    char[] out = new char[CHECKSUM_LENGTH];
    for (int i = CHECKSUM_LENGTH - 1; i >= 0; i--) {
      out[i] = BASE62.charAt((int) (value % 62));
      value /= 62;
    }
    return new String(out);
  }

  public static String hash(String secret) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** Compares two hashes in constant time. */
  public static boolean sameHash(String a, String b) {
    return MessageDigest.isEqual(
        a.getBytes(StandardCharsets.US_ASCII), b.getBytes(StandardCharsets.US_ASCII));
  }

  /** What a listing shows of a secret: its prefix and last four characters. */
  public static String hint(String secret) {
    int underscore = secret.indexOf('_');
    return secret.substring(0, underscore + 1) + "..." + secret.substring(secret.length() - 4);
  }
}
