package io.engram.access;

import io.engram.platform.http.ApiException;
import java.util.regex.Pattern;

/**
 * The id of an end user of an organization's app (and of a session), as a token binds it and
 * memory calls name it: the app's own user ids, e-mail addresses, UUIDs, hashes, thread ids. At
 * most as long as OpenAI's {@code user} field may be, so any value an unchanged client sends fits;
 * no control characters, no space at either end; compared exactly.
 */
public final class EndUserId {
  public static final int MAX = 256;
  private static final Pattern ID = Pattern.compile("^(?!\\s)[^\\p{Cc}]{1,256}(?<!\\s)$");

  private EndUserId() {}

  /** Refuses an id that breaks the rule (400 naming {@code param}). */
  public static void check(String id, String param) {
    if (!ID.matcher(id).matches()) {
      throw ApiException.badRequest(
          param,
          "'" + param + "' must be 1-" + MAX
              + " characters without control characters or spaces at either end");
    }
  }
}
