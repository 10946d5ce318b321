package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.net.AddressRange;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One outbound rule: a destination (a host name, {@code *.example.com} for every name under it,
 * or an address range), a port ({@code *}: any), a protocol ({@code tcp} or {@code *}) and what
 * happens to a matching connection. A host-name rule matches the name the connection was asked
 * for; a range matches every address that name resolved to.
 */
public record FirewallRule(
    String destination, AddressRange range, int port, String protocol, boolean allow) {
  static final int ANY_PORT = -1;

  /** Whether the rule covers a connection to {@code host} at {@code address}, TCP port {@code port}. */
  boolean matches(String host, byte[] address, int port) {
    if (this.port != ANY_PORT && this.port != port) {
      return false;
    }
    if (range != null) {
      return range.contains(address);
    }
    if (destination.startsWith("*.")) {
      return host.length() > destination.length() - 1
          && host.regionMatches(
              true,
              host.length() - destination.length() + 1,
              destination,
              1,
              destination.length() - 1);
    }
    return host.equalsIgnoreCase(destination);
  }

  /** The rule as the organization wrote it (canonical form). */
  Map<String, Object> toView() {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("destination", destination);
    view.put("port", port == ANY_PORT ? "*" : port);
    view.put("protocol", protocol);
    view.put("action", allow ? "allow" : "deny");
    return view;
  }

  /** How the rule reads in an error message. */
  String describe() {
    return (allow ? "allow " : "deny ") + destination + " port " + (port == ANY_PORT ? "*" : port)
        + " protocol " + protocol;
  }

  /** Parses {@code outbound_rules[index]}; every bad field is a 400 naming it. */
  static FirewallRule parse(JsonNode node, int index) {
    String at = "outbound_rules[" + index + "]";
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest(at, "'" + at + "' must be an object");
    }
    for (var names = node.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!java.util.Set.of("destination", "port", "protocol", "action").contains(name)) {
        throw ApiException.badRequest(
            at + "." + name,
            "'" + at + "." + name + "' is not a rule field (destination, port, protocol, action)");
      }
    }
    String destination = text(node, at, "destination");
    AddressRange range = null;
    String canonical;
    if (AddressRange.looksLikeAddress(destination.split("/", 2)[0])) {
      try {
        range = AddressRange.parse(destination);
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(at + ".destination", e.getMessage());
      }
      canonical = range.toString();
    } else {
      canonical = HostName.rulePattern(destination, at + ".destination");
    }
    JsonNode portNode = node.get("port");
    int port;
    if (portNode == null || portNode.isNull()) {
      throw ApiException.badRequest(
          at + ".port", "'" + at + ".port' is required: 1-65535 or \"*\"");
    } else if (portNode.isTextual() && portNode.asText().equals("*")) {
      port = ANY_PORT;
    } else if (portNode.isIntegralNumber()
        && portNode.asLong() >= 1
        && portNode.asLong() <= 65535) {
      port = portNode.asInt();
    } else {
      throw ApiException.badRequest(
          at + ".port", "'" + at + ".port' must be an integer from 1 to 65535 or \"*\"");
    }
    String protocol = text(node, at, "protocol");
    if (!protocol.equals("tcp") && !protocol.equals("*")) {
      throw ApiException.badRequest(
          at + ".protocol", "'" + at + ".protocol' must be \"tcp\" or \"*\"");
    }
    String action = text(node, at, "action");
    if (!action.equals("allow") && !action.equals("deny")) {
      throw ApiException.badRequest(
          at + ".action", "'" + at + ".action' must be \"allow\" or \"deny\"");
    }
    return new FirewallRule(canonical, range, port, protocol, action.equals("allow"));
  }

  private static String text(JsonNode node, String at, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual() || value.asText().isBlank()) {
      throw ApiException.badRequest(
          at + "." + field, "'" + at + "." + field + "' must be a non-empty string");
    }
    return value.asText().strip();
  }
}
