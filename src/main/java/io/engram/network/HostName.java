package io.engram.network;

import io.engram.platform.http.ApiException;
import java.net.IDN;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Host names as Engram keeps them: lower-cased, an internationalized name in its ASCII
 * (punycode) form, without a trailing dot, each label 1-63 letters, digits or hyphens (not at an
 * end), 253 characters at most.
 */
final class HostName {
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
  private static final int MAX_LENGTH = 253;

  private HostName() {}

  /**
   * A custom domain: a real, fully qualified name (two labels at least, a top-level label that is
   * not a number): no address literal, no wildcard. 400 naming {@code param}.
   */
  static String domain(String raw, String param) {
    String text = raw == null ? "" : raw.strip();
    if (text.startsWith("*")) {
      throw ApiException.badRequest(param, "'" + param + "' must name one host, not a wildcard");
    }
    if (io.engram.platform.net.AddressRange.looksLikeAddress(text)) {
      throw ApiException.badRequest(
          param, "'" + param + "' must be a host name, not an IP address");
    }
    String name = ascii(text, param);
    String[] labels = name.split("\\.");
    if (labels.length < 2 || labels[labels.length - 1].matches("[0-9]+")) {
      throw ApiException.badRequest(
          param, "'" + param + "' must be a fully qualified name such as api.example.com");
    }
    return name;
  }

  /** A firewall destination name: a host name or {@code *.} and a name (every name under it). */
  static String rulePattern(String raw, String param) {
    String text = raw.strip();
    if (text.startsWith("*.")) {
      return "*." + ascii(text.substring(2), param);
    }
    return ascii(text, param);
  }

  private static String ascii(String text, String param) {
    String name = text.toLowerCase(Locale.ROOT);
    if (name.endsWith(".")) {
      name = name.substring(0, name.length() - 1);
    }
    try {
      name = IDN.toASCII(name, IDN.USE_STD3_ASCII_RULES).toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      throw invalid(param);
    }
    if (name.isEmpty() || name.length() > MAX_LENGTH) {
      throw invalid(param);
    }
    for (String label : name.split("\\.", -1)) {
      if (!LABEL.matcher(label).matches()) {
        throw invalid(param);
      }
    }
    return name;
  }

  private static ApiException invalid(String param) {
    return ApiException.badRequest(
        param,
        "'" + param + "' is not a valid host name: labels of letters, digits and hyphens "
            + "(1-63 each, no hyphen at either end), 253 characters at most");
  }
}
