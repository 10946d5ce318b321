package io.engram.instances.storage;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One byte range of a file (RFC 9110, section 14): {@code bytes=first-last}, {@code bytes=first-}
 * or {@code bytes=-suffix}. Several ranges, or a header this does not read, are ignored (the whole
 * file is sent, as the RFC allows; so is a number too long for any file); a range that starts
 * past the end is unsatisfiable (416).
 */
public record ByteRange(long first, long last) {
  // At most 18 digits: every such number fits a long (19 may not, and would fail the parse).
  private static final Pattern ONE = Pattern.compile("^bytes=(\\d{0,18})-(\\d{0,18})$");

  public long length() {
    return last - first + 1;
  }

  /** The range asked for in a file of {@code size} bytes; empty: send it all. */
  public static Optional<ByteRange> parse(String header, long size) throws Unsatisfiable {
    if (header == null) {
      return Optional.empty();
    }
    Matcher m = ONE.matcher(header.strip());
    if (!m.matches() || m.group(1).isEmpty() && m.group(2).isEmpty()) {
      return Optional.empty();
    }
    if (m.group(1).isEmpty()) {
      long suffix = Long.parseLong(m.group(2));
      if (suffix == 0 || size == 0) {
        throw new Unsatisfiable();
      }
      return Optional.of(new ByteRange(Math.max(0, size - suffix), size - 1));
    }
    long first = Long.parseLong(m.group(1));
    long last = m.group(2).isEmpty() ? size - 1 : Long.parseLong(m.group(2));
    if (!m.group(2).isEmpty() && last < first) {
      return Optional.empty(); // not a range: the whole file
    }
    if (first >= size) {
      throw new Unsatisfiable();
    }
    return Optional.of(new ByteRange(first, Math.min(last, size - 1)));
  }

  /** The range cannot be served from this file (416, with the file's size). */
  public static final class Unsatisfiable extends Exception {
    private static final long serialVersionUID = 1L;

    Unsatisfiable() {
      super(null, null, false, false);
    }
  }
}
