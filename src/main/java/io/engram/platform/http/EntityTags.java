package io.engram.platform.http;

import java.util.HashSet;
import java.util.Set;
import java.util.function.LongPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ETags for versioned resources, and the If-Match precondition over them. A resource at version
 * {@code n} has the strong tag {@code "n"}. If-Match takes {@code *} or a list of tags; weak
 * tags ({@code W/"n"}) never match, as RFC 9110 requires strong comparison for If-Match.
 */
public final class EntityTags {
  private static final Pattern TAG = Pattern.compile("\\s*(W/)?\"([^\"]*)\"\\s*(,|$)");

  private EntityTags() {}

  public static String of(long version) {
    return "\"" + version + "\"";
  }

  /**
   * The versions an If-Match header accepts: null when the header is absent or {@code *} (any
   * current version will do). A header that is not a list of entity tags is a 400.
   */
  public static LongPredicate ifMatch(String header) {
    if (header == null || header.isBlank() || header.strip().equals("*")) {
      return null;
    }
    Set<Long> versions = new HashSet<>();
    Matcher matcher = TAG.matcher(header);
    int end = 0;
    while (end < header.length() && matcher.find(end) && matcher.start() == end) {
      if (matcher.group(1) == null && matcher.group(2).matches("\\d{1,18}")) {
        versions.add(Long.parseLong(matcher.group(2)));
      }
      end = matcher.end();
    }
    if (end != header.length()) {
      throw ApiException.badRequest(
          "If-Match",
          "If-Match must be * or entity tags such as \"3\", " + "as sent in the ETag header");
    }
    return versions::contains;
  }
}
