package io.engram.platform.crypto;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Secrets that sign what this server sends (webhooks, action bridge calls), and the signature:
 * {@code t=<unix seconds>,v1=<hex HMAC-SHA256 of "<seconds>.<body>">}, so a receiver can check the
 * sender and refuse replays.
 */
public final class SigningSecrets {
  private static final SecureRandom RANDOM = new SecureRandom();

  private SigningSecrets() {}

  /** A new secret: the prefix and 32 random bytes, URL-safe. */
  public static String generate(String prefix) {
    byte[] random = new byte[32];
    RANDOM.nextBytes(random);
    return prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
  }

  /** {@code t=<seconds>,v1=<hex>}: the HMAC-SHA256 of {@code "<seconds>.<body>"} under the secret. */
  public static String signature(String secret, long seconds, String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      byte[] digest = mac.doFinal((seconds + "." + body).getBytes(StandardCharsets.UTF_8));
      return "t=" + seconds + ",v1=" + HexFormat.of().formatHex(digest);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is unavailable", e);
    }
  }
}
