package io.engram.capabilities;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.platform.json.Json;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The capabilities enabled on an assistant and their configs, as one value: every enabled id maps
 * to a config object (empty for a capability without config), and nothing else is in the map.
 */
public record CapabilitySet(List<String> capabilities, Map<String, ObjectNode> configs) {

  public CapabilitySet {
    capabilities = List.copyOf(capabilities);
    configs = Collections.unmodifiableMap(new LinkedHashMap<>(configs));
  }

  /** The set every new assistant starts with: the always-enabled capabilities, without config. */
  public static CapabilitySet initial(CapabilityRegistry registry) {
    Map<String, ObjectNode> configs = new LinkedHashMap<>();
    registry.alwaysEnabled().forEach(c -> configs.put(c.id(), Json.MAPPER.createObjectNode()));
    return new CapabilitySet(List.copyOf(configs.keySet()), configs);
  }

  /** The configs as one JSON object, in the order of the capabilities list. */
  public ObjectNode configsJson() {
    ObjectNode json = Json.MAPPER.createObjectNode();
    capabilities.forEach(id -> json.set(id, configs.get(id)));
    return json;
  }

  /** The stored form: the list and the configs object as JSON text. */
  String capabilitiesText() {
    return Json.write(capabilities);
  }

  String configsText() {
    return Json.write(configsJson());
  }

  static CapabilitySet fromText(String capabilitiesText, String configsText) {
    List<String> ids = List.of(Json.read(capabilitiesText, String[].class));
    ObjectNode stored = Json.read(configsText, ObjectNode.class);
    Map<String, ObjectNode> configs = new LinkedHashMap<>();
    for (String id : ids) {
      configs.put(
          id,
          stored.get(id) instanceof ObjectNode config ? config : Json.MAPPER.createObjectNode());
    }
    return new CapabilitySet(ids, configs);
  }

  /** Ids in this set and not in {@code other}. */
  public List<String> without(CapabilitySet other) {
    return capabilities.stream().filter(id -> !other.capabilities.contains(id)).toList();
  }

  /** Ids in both sets whose config differs. */
  public List<String> reconfiguredSince(CapabilitySet before) {
    return capabilities.stream()
        .filter(
            id -> before.configs.containsKey(id) && !before.configs.get(id).equals(configs.get(id)))
        .toList();
  }
}
