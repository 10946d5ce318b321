package io.engram.settings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What an organization set itself (the organization layer of its configuration), and the version
 * of that setting: counts and seconds as Long, switches as Boolean, the allowlist as a list of
 * canonical CIDR strings, shares as Double. Stored as the JSON the GET shows, grouped.
 */
public record Overrides(Map<ConfigField, Object> values, long version) {
  public static final Overrides NONE = new Overrides(Map.of(), 0);

  public Overrides {
    values = Collections.unmodifiableMap(
        values.isEmpty() ? new EnumMap<>(ConfigField.class) : new EnumMap<>(values));
  }

  /** The grouped JSON form: {@code {"quotas": {"max_tokens_per_request": 1024}, ...}}. */
  public String toJson() {
    ObjectNode root = Json.MAPPER.createObjectNode();
    values.forEach((field, value) -> {
      ObjectNode group = root.has(field.group())
          ? (ObjectNode) root.get(field.group())
          : root.putObject(field.group());
      group.set(field.field(), Json.MAPPER.valueToTree(value));
    });
    return Json.write(root);
  }

  /** Reads what {@link #toJson} wrote; fields this version does not know are dropped. */
  public static Overrides fromJson(String json, long version) {
    JsonNode root = Json.read(json, JsonNode.class);
    Map<ConfigField, Object> values = new EnumMap<>(ConfigField.class);
    root.properties()
        .forEach(group -> group
            .getValue()
            .properties()
            .forEach(entry -> ConfigField.of(group.getKey(), entry.getKey())
                .ifPresent(field -> values.put(field, stored(field, entry.getValue())))));
    return new Overrides(values, version);
  }

  private static Object stored(ConfigField field, JsonNode node) {
    return switch (field.kind()) {
      case COUNT, SECONDS -> node.asLong();
      case SWITCH -> node.asBoolean();
      case SHARE -> node.asDouble();
      case CIDR_LIST -> {
        List<String> ranges = new ArrayList<>();
        node.forEach(item -> ranges.add(item.asText()));
        yield List.copyOf(ranges);
      }
    };
  }
}
