package io.engram.objectstores;

import io.engram.platform.http.ApiException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An object-store URI: {@code s3://bucket/key}, {@code gs://bucket/key} or {@code
 * azure://container/key}. The key may be a prefix (ending in {@code /}, or empty for the whole
 * bucket). Keys are confined like instance paths: no {@code .} or {@code ..} segment, no control
 * character, at most 1,024 bytes, so an import cannot be steered outside what was named and an
 * export cannot write a name some store treats specially.
 */
public record ObjectUri(ObjectStoreProvider provider, String bucket, String key) {
  private static final Pattern URI =
      Pattern.compile("^([a-z0-9]+)://([a-z0-9][a-z0-9._-]{1,61}[a-z0-9])(?:/(.*))?$");
  static final int MAX_KEY_BYTES = 1024;

  /** Parses {@code value}; a 400 naming {@code param} when it is not an object-store URI. */
  public static ObjectUri parse(String value, String param) {
    Matcher m = value == null ? null : URI.matcher(value);
    if (m == null || !m.matches()) {
      throw ApiException.badRequest(
          param,
          "'" + param + "' is an object-store URI: s3://bucket/key, gs://... or azure://...");
    }
    ObjectStoreProvider provider = ObjectStoreProvider.ofScheme(m.group(1))
        .orElseThrow(() -> ApiException.badRequest(
            param, "'" + param + "' names no known store: the schemes are s3, gs and azure"));
    String key = m.group(3) == null ? "" : m.group(3);
    checkKey(key, param);
    return new ObjectUri(provider, m.group(2), key);
  }

  private static void checkKey(String key, String param) {
    if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
      throw ApiException.badRequest(param, "An object key is at most 1,024 bytes");
    }
    if (key.startsWith("/") || key.contains("//")) {
      throw ApiException.badRequest(param, "An object key has no empty segment");
    }
    for (String segment : key.split("/", -1)) {
      if (segment.equals(".") || segment.equals("..")) {
        throw ApiException.badRequest(param, "An object key has no '.' or '..' segment");
      }
    }
    if (key.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      throw ApiException.badRequest(param, "An object key has no control character");
    }
  }

  /** Whether the key names a folder of objects (ends in /, or is the whole bucket). */
  public boolean isPrefix() {
    return key.isEmpty() || key.endsWith("/");
  }

  @Override
  public String toString() {
    return provider.scheme() + "://" + bucket + "/" + key;
  }
}
