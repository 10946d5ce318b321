package io.engram.platform;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;

/**
 * Counts tokens the way limits, usage and the memory block's budget all count them: with the
 * cl100k_base tokenizer, the common denominator of today's chat models. One shared encoding
 * (it is thread-safe, and loading its vocabulary takes tens of milliseconds).
 */
public final class TokenCounter {
  private static final Encoding CL100K =
      Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

  private TokenCounter() {}

  public static int count(String text) {
    return CL100K.countTokens(text);
  }
}
