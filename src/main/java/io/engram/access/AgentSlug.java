package io.engram.access;

import java.util.regex.Pattern;

/**
 * An agent's name in paths, headers and token bindings: lowercase letters, digits, '-' and '_',
 * starting with a letter or digit, at most 64 characters. Agents need no registration; naming one
 * opens its memory boundary.
 */
public final class AgentSlug {
  private static final Pattern SLUG = Pattern.compile("^[a-z0-9][a-z0-9_-]{0,63}$");

  private AgentSlug() {}

  public static boolean isValid(String slug) {
    return slug != null && SLUG.matcher(slug).matches();
  }

  public static String rule() {
    return "lowercase letters, digits, '-' and '_', starting with a letter or digit, at most 64 characters";
  }
}
