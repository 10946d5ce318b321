package io.engram.platform.http;

import java.net.URI;
import java.util.Locale;

/**
 * A URL this server will call on an organization's behalf (a webhook, an action bridge): http or
 * https, with a host, without credentials in it, of a bounded length. Anything else is a 400
 * naming the field.
 */
public final class OutboundUrl {
  public static final int MAX_LENGTH = 2048;

  private OutboundUrl() {}

  public static URI checked(String url, String field) {
    URI uri;
    try {
      uri = URI.create(url.strip());
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(field, "'" + field + "' is not a URL: " + e.getMessage());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!(scheme.equals("https") || scheme.equals("http"))
        || uri.getHost() == null
        || url.length() > MAX_LENGTH
        || uri.getUserInfo() != null) {
      throw ApiException.badRequest(
          field,
          "'" + field + "' must be an http or https URL with a host, no user name or password, "
              + "at most " + MAX_LENGTH + " characters");
    }
    return uri;
  }
}
