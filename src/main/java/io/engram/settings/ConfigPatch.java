package io.engram.settings;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.organizations.Plan;
import io.engram.platform.http.ApiException;
import io.engram.settings.ConfigField.Bounds;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;

/**
 * A {@code PATCH /config} body applied to an organization's overrides, with RFC 7396 merge rules:
 * a field given sets the override, a field given as {@code null} removes it (the default comes
 * back), a group given as {@code null} removes all of its overrides, a field left out is kept.
 * Every field is checked before anything is applied: the first bad one is a 400 naming it, and
 * the overrides are unchanged.
 */
public final class ConfigPatch {
  private ConfigPatch() {}

  public static Overrides apply(
      Overrides current, JsonNode body, Plan plan, SystemDefaults system) {
    Map<ConfigField, Object> next = new EnumMap<>(ConfigField.class);
    next.putAll(current.values());
    for (Entry<String, JsonNode> group : body.properties()) {
      if (!ConfigField.isGroup(group.getKey())) {
        throw ApiException.badRequest(
            group.getKey(),
            "Unknown configuration group '" + group.getKey()
                + "'; the groups are quotas, network and websocket");
      }
      if (group.getValue().isNull()) {
        next.keySet().removeIf(field -> field.group().equals(group.getKey()));
        continue;
      }
      if (!group.getValue().isObject()) {
        throw ApiException.badRequest(
            group.getKey(), "'" + group.getKey() + "' must be an object (or null to reset it)");
      }
      for (Entry<String, JsonNode> entry : group.getValue().properties()) {
        String path = group.getKey() + "." + entry.getKey();
        ConfigField field = ConfigField.of(group.getKey(), entry.getKey())
            .orElseThrow(
                () -> ApiException.badRequest(path, "Unknown configuration field '" + path + "'"));
        if (entry.getValue().isNull()) {
          next.remove(field);
        } else {
          next.put(field, checked(field, entry.getValue(), field.bounds(plan.limits(), system)));
        }
      }
    }
    return new Overrides(next, current.version());
  }

  private static Object checked(ConfigField field, JsonNode value, Bounds bounds) {
    String path = field.path();
    return switch (field.kind()) {
      case COUNT, SECONDS -> {
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
          throw ApiException.badRequest(
              path, "'" + path + "' must be an integer" + unit(field) + range(bounds));
        }
        long number = value.asLong();
        if (number < bounds.min() || (bounds.max() != null && number > bounds.max())) {
          throw ApiException.badRequest(
              path, "'" + path + "' is " + number + unit(field) + "; allowed" + range(bounds));
        }
        yield number;
      }
      case SWITCH -> {
        if (!value.isBoolean()) {
          throw ApiException.badRequest(path, "'" + path + "' must be true or false");
        }
        if (field == ConfigField.WEBSOCKET_ENABLED
            && value.asBoolean()
            && Boolean.FALSE.equals(bounds.defaultValue())) {
          throw ApiException.badRequest(
              path,
              "WebSockets are turned off on this server (ENGRAM_WEBSOCKET_ENABLED=false); an "
                  + "organization can turn them off for itself, not on");
        }
        yield value.asBoolean();
      }
      case CIDR_LIST -> cidrs(path, value);
      case SHARE -> {
        if (!value.isNumber() || value.asDouble() < 0 || value.asDouble() > 1) {
          throw ApiException.badRequest(path, "'" + path + "' must be a number from 0 to 1");
        }
        yield value.asDouble();
      }
    };
  }

  private static List<String> cidrs(String path, JsonNode value) {
    if (!value.isArray()) {
      throw ApiException.badRequest(
          path, "'" + path + "' must be an array of IPv4 CIDR ranges (empty: every address)");
    }
    if (value.size() > ConfigField.MAX_ALLOWED_IPS) {
      throw ApiException.badRequest(
          path,
          "'" + path + "' has " + value.size() + " entries; at most "
              + ConfigField.MAX_ALLOWED_IPS);
    }
    LinkedHashSet<String> ranges = new LinkedHashSet<>();
    for (int i = 0; i < value.size(); i++) {
      JsonNode item = value.get(i);
      try {
        if (!item.isTextual()) {
          throw new IllegalArgumentException("each entry must be a string such as 10.1.0.0/16");
        }
        ranges.add(Cidr.parse(item.asText()).toString());
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(path + "[" + i + "]", e.getMessage());
      }
    }
    return List.copyOf(new ArrayList<>(ranges));
  }

  private static String unit(ConfigField field) {
    return field.unit() == null ? "" : " (" + field.unit() + ")";
  }

  private static String range(Bounds bounds) {
    return bounds.max() == null
        ? ", at least " + bounds.min()
        : " from " + bounds.min() + " to " + bounds.max();
  }
}
