package io.engram.instances.storage;

import io.engram.platform.http.ApiException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * A path inside an instance's storage, checked and normalized: segments separated by {@code /},
 * none empty, {@code .} or {@code ..}, no backslash, no control character, at most
 * {@value #MAX_SEGMENT_BYTES} bytes a segment and {@value #MAX_BYTES} in all; the first segment
 * names the {@link DataClass}. A path never reaches the disk: files are kept under names of their
 * own (blobs), so nothing a client sends can point outside its instance.
 */
public record StoragePath(String value, DataClass dataClass) {
  public static final int MAX_BYTES = 1024;
  public static final int MAX_SEGMENT_BYTES = 255;

  static final String CLASSES =
      Arrays.stream(DataClass.values()).map(DataClass::wireName).collect(Collectors.joining(", "));

  /** A file's path; 400 naming {@code param} when it is not one. */
  public static StoragePath of(String raw, String param) {
    if (raw == null || raw.isEmpty()) {
      throw ApiException.badRequest(param, "A path is required");
    }
    if (raw.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
      throw ApiException.badRequest(param, "A path is at most " + MAX_BYTES + " bytes");
    }
    if (raw.startsWith("/")) {
      throw ApiException.badRequest(
          param, "Paths are relative to the instance's storage: no leading '/'");
    }
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c < 0x20 || c == 0x7f || c == '\\' || Character.isSurrogate(c) && !validPair(raw, i)) {
        throw ApiException.badRequest(
            param, "A path may not hold control characters, NUL, backslashes or broken text");
      }
    }
    String[] segments = raw.split("/", -1);
    for (String segment : segments) {
      if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
        throw ApiException.badRequest(param, "Path segments may not be empty, '.' or '..': " + raw);
      }
      if (segment.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
        throw ApiException.badRequest(
            param, "A path segment is at most " + MAX_SEGMENT_BYTES + " bytes");
      }
    }
    DataClass dataClass = DataClass.of(segments[0])
        .orElseThrow(() -> ApiException.badRequest(
            param, "A path starts with its data class (" + CLASSES + "), as in data/report.csv"));
    if (segments.length < 2) {
      throw ApiException.badRequest(param, "A file lives inside its class: " + raw + "/<name>");
    }
    return new StoragePath(raw, dataClass);
  }

  /**
   * A listing prefix: empty (everything), or the start of a path. Checked with the same rules for
   * the characters it holds, but it may end anywhere.
   */
  public static String prefix(String raw) {
    if (raw == null || raw.isEmpty()) {
      return "";
    }
    if (raw.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES
        || raw.startsWith("/")
        || raw.chars().anyMatch(c -> c < 0x20 || c == 0x7f || c == '\\')
        || Arrays.stream(raw.split("/", -1)).anyMatch(s -> s.equals(".") || s.equals(".."))) {
      throw ApiException.badRequest("prefix", "Not a path prefix: " + raw);
    }
    return raw;
  }

  private static boolean validPair(String text, int i) {
    char c = text.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
    }
    return i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
  }
}
