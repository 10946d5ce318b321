package io.engram.platform.http;

import io.javalin.http.Context;
import java.time.Instant;

/** Typed, bounded query parameters; a bad value is a 400 naming the parameter. */
public final class QueryParams {

  private QueryParams() {}

  public static int integer(Context ctx, String name, int fallback, int min, int max) {
    Long value = longValue(ctx, name, min, max);
    return value == null ? fallback : value.intValue();
  }

  /** The parameter as a whole number in [min, max], or null when absent. */
  public static Long longValue(Context ctx, String name, long min, long max) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return null;
    }
    try {
      long value = Long.parseLong(raw.strip());
      if (value >= min && value <= max) {
        return value;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw ApiException.badRequest(
        name, "'" + name + "' must be an integer between " + min + " and " + max);
  }

  /** {@code true} or {@code false}; {@code fallback} when absent. */
  public static boolean bool(Context ctx, String name, boolean fallback) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return fallback;
    }
    return switch (raw.strip()) {
      case "true" -> true;
      case "false" -> false;
      default -> throw ApiException.badRequest(name, "'" + name + "' must be true or false");
    };
  }

  /** A point in time given as Unix seconds or an RFC 3339 timestamp; null when absent. */
  public static Instant instant(Context ctx, String name) {
    String raw = ctx.queryParam(name);
    if (raw == null) {
      return null;
    }
    return Timestamps.parse(raw).orElseThrow(() -> Timestamps.invalid(name));
  }
}
