package io.engram.inference.call;

import io.engram.platform.http.ApiException;
import java.util.Locale;

/**
 * What a request asks of the response cache (the {@code X-Engram-Cache} header): use it (the
 * default, when the organization turned it on), leave it out, or answer anew and keep that.
 */
public enum CacheMode {
  ON,
  OFF,
  REFRESH;

  public static final String HEADER = "X-Engram-Cache";

  /** The header's value (on, off, refresh; absent: on), or a 400 naming the header. */
  public static CacheMode of(String header) {
    if (header == null) {
      return ON;
    }
    return switch (header.strip().toLowerCase(Locale.ROOT)) {
      case "on" -> ON;
      case "off" -> OFF;
      case "refresh" -> REFRESH;
      default ->
        throw ApiException.badRequest(
            HEADER, "'" + HEADER + "' is on, off or refresh, not '" + header + "'");
    };
  }
}
