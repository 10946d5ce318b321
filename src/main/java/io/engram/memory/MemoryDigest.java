package io.engram.memory;

import io.engram.platform.Digests;
import java.text.Normalizer;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What makes two writes the same memory: the same text once normalized (Unicode compatibility
 * forms, case, runs of white space, a final full stop), as a digest the store can look up, and
 * subjects that do not disagree ({@link #sameSubject}). "Acme's fiscal year starts in April." and
 * "acme's fiscal year starts in  April" are one memory; "Likes tea" about Ada and about Bob are two.
 */
public final class MemoryDigest {
  private static final Pattern SPACES = Pattern.compile("\\s+");
  private static final Pattern FINAL_STOPS = Pattern.compile("[.!?。！？]+$");

  private MemoryDigest() {}

  public static String of(String text) {
    return Digests.sha256(normalized(text));
  }

  /** Subjects that do not disagree: the same once normalized, or one of them not given. */
  static boolean sameSubject(String one, String other) {
    return one == null || other == null || normalized(one).equals(normalized(other));
  }

  static String normalized(String value) {
    if (value == null) {
      return "";
    }
    String folded = Normalizer.normalize(value, Normalizer.Form.NFKC).toLowerCase(Locale.ROOT);
    String spaced = SPACES.matcher(folded).replaceAll(" ").strip();
    return FINAL_STOPS.matcher(spaced).replaceAll("").strip();
  }
}
