package io.engram.platform.crypto;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals secrets Engram must read back (an organization's secret variables, webhook signing keys)
 * with AES-256-GCM under the server's secret key: a stolen database or backup holds only sealed
 * text. Each seal has a fresh 96-bit nonce; the sealed form is {@code v1:<base64(nonce|text|tag)>}.
 */
public final class SecretBox {
  private static final String PREFIX = "v1:";
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SecretKeySpec key;

  public SecretBox(byte[] key) {
    if (key.length != 32) {
      throw new IllegalArgumentException("the secret key is 32 bytes");
    }
    this.key = new SecretKeySpec(key.clone(), "AES");
  }

  public String seal(String plaintext) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
      byte[] sealed = cipher.doFinal(plaintext.getBytes(StandardCharsets.UTF_8));
      byte[] whole = new byte[NONCE_BYTES + sealed.length];
      System.arraycopy(nonce, 0, whole, 0, NONCE_BYTES);
      System.arraycopy(sealed, 0, whole, NONCE_BYTES, sealed.length);
      return PREFIX + Base64.getEncoder().encodeToString(whole);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is unavailable", e);
    }
  }

  /** The plaintext; IllegalStateException when it was sealed under another key or altered. */
  public String open(String sealed) {
    if (sealed == null || !sealed.startsWith(PREFIX)) {
      throw new IllegalStateException("not a sealed secret");
    }
    byte[] whole = Base64.getDecoder().decode(sealed.substring(PREFIX.length()));
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, whole, 0, NONCE_BYTES));
      byte[] plain = cipher.doFinal(whole, NONCE_BYTES, whole.length - NONCE_BYTES);
      return new String(plain, StandardCharsets.UTF_8);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(
          "a sealed secret does not open with this server's secret key (ENGRAM_SECRET_KEY)", e);
    }
  }

  /**
   * A value that identifies the key without revealing it, so nodes can check they share one: an
   * HMAC of a fixed label under the key.
   */
  public String fingerprint() {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key.getEncoded(), "HmacSHA256"));
      byte[] digest = mac.doFinal("engram secret key fingerprint".getBytes(StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(digest, 0, 16);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is unavailable", e);
    }
  }
}
