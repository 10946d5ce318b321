package io.engram.platform.http;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;

/** Points in time as clients send them, in bodies and query strings: Unix seconds or RFC 3339. */
final class Timestamps {

  private Timestamps() {}

  static Optional<Instant> ofEpochSeconds(long seconds) {
    try {
      return Optional.of(Instant.ofEpochSecond(seconds));
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /** Digits are Unix seconds; anything else must be an RFC 3339 timestamp. */
  static Optional<Instant> parse(String text) {
    String value = text.strip();
    if (value.matches("\\d{1,12}")) {
      return ofEpochSeconds(Long.parseLong(value));
    }
    try {
      return Optional.of(OffsetDateTime.parse(value).toInstant());
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  static ApiException invalid(String param) {
    return ApiException.badRequest(
        param,
        "'" + param + "' must be Unix seconds or an RFC 3339 timestamp "
            + "such as 2030-01-31T12:00:00Z");
  }
}
