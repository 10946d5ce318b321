package io.engram.access;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * PBKDF2-HMAC-SHA256 password hashes, written {@code pbkdf2-sha256$<iterations>$<salt>$<hash>} so
 * the work factor can be raised later without invalidating stored hashes.
 */
public final class PasswordHasher {
  static final int ITERATIONS = 600_000;
  private static final int SALT_BYTES = 16;
  private static final int HASH_BITS = 256;
  private static final SecureRandom RANDOM = new SecureRandom();
  /** Verified when no user matches, so an unknown email costs as much time as a wrong password. */
  private static final String DECOY = hash("decoy-password-for-timing");

  private PasswordHasher() {}

  public static String hash(String password) {
    byte[] salt = new byte[SALT_BYTES];
    RANDOM.nextBytes(salt);
    byte[] hash = derive(password, salt, ITERATIONS);
    Base64.Encoder b64 = Base64.getEncoder().withoutPadding();
    return "pbkdf2-sha256$" + ITERATIONS + "$" + b64.encodeToString(salt) + "$"
        + b64.encodeToString(hash);
  }

  public static boolean verify(String password, String stored) {
    if (stored == null) {
      verify(password, DECOY);
      return false;
    }
    String[] parts = stored.split("\\$");
    if (parts.length != 4 || !parts[0].equals("pbkdf2-sha256")) {
      return false;
    }
    Base64.Decoder b64 = Base64.getDecoder();
    byte[] expected = b64.decode(parts[3]);
    byte[] actual = derive(password, b64.decode(parts[2]), Integer.parseInt(parts[1]));
    return MessageDigest.isEqual(expected, actual);
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, HASH_BITS);
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
          .generateSecret(spec)
          .getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is part of every JDK", e);
    } finally {
      spec.clearPassword();
    }
  }
}
