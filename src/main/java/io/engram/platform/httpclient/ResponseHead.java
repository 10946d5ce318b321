package io.engram.platform.httpclient;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** A response's status and headers (names compared without case). */
public record ResponseHead(int minorVersion, int status, List<String> names, List<String> values) {

  static ResponseHead parseStatus(String line) throws MalformedResponseException {
    // HTTP/1.x SSS [reason]
    if (line.length() < 12
        || !line.startsWith("HTTP/1.")
        || line.charAt(8) != ' '
        || (line.length() > 12 && line.charAt(12) != ' ')) {
      throw new MalformedResponseException("not an HTTP/1.x status line: " + abbreviate(line));
    }
    int minor = line.charAt(7) - '0';
    int status = 0;
    for (int i = 9; i < 12; i++) {
      char c = line.charAt(i);
      if (c < '0' || c > '9') {
        throw new MalformedResponseException("not an HTTP/1.x status line: " + abbreviate(line));
      }
      status = status * 10 + (c - '0');
    }
    if (minor < 0 || minor > 9 || status < 100) {
      throw new MalformedResponseException("not an HTTP/1.x status line: " + abbreviate(line));
    }
    return new ResponseHead(minor, status, List.of(), List.of());
  }

  ResponseHead withHeaders(List<String> lines) throws MalformedResponseException {
    String[] names = new String[lines.size()];
    String[] values = new String[lines.size()];
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new MalformedResponseException("not a header line: " + abbreviate(line));
      }
      names[i] = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      values[i] = line.substring(colon + 1).strip();
    }
    return new ResponseHead(minorVersion, status, List.of(names), List.of(values));
  }

  /** The first value of a header. */
  public Optional<String> header(String name) {
    String wanted = name.toLowerCase(Locale.ROOT);
    for (int i = 0; i < names.size(); i++) {
      if (names.get(i).equals(wanted)) {
        return Optional.of(values.get(i));
      }
    }
    return Optional.empty();
  }

  /** All values of a header, each comma-separated list split. */
  List<String> tokens(String name) {
    String wanted = name.toLowerCase(Locale.ROOT);
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      if (names.get(i).equals(wanted)) {
        for (String token : values.get(i).split(",")) {
          if (!token.isBlank()) {
            tokens.add(token.strip().toLowerCase(Locale.ROOT));
          }
        }
      }
    }
    return tokens;
  }

  private static String abbreviate(String line) {
    return line.length() > 80 ? line.substring(0, 80) + "..." : line;
  }
}
