package io.engram.capabilities;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The wire form of registry entries, field names as the spec lists them. Registry entries carry
 * {@code alwaysEnabled}; the available-capabilities route leaves it out, as the spec's table does.
 * {@code configFields} is present only when config is required; {@code executable} and
 * {@code configSchema} (every field's type and bounds) are Engram's additions.
 */
final class CapabilityViews {

  private CapabilityViews() {}

  static Map<String, Object> registryEntry(Capability capability) {
    return entry(capability, true);
  }

  static Map<String, Object> availableEntry(Capability capability) {
    return entry(capability, false);
  }

  static List<Map<String, Object>> registryEntries(List<Capability> capabilities) {
    return capabilities.stream().map(CapabilityViews::registryEntry).toList();
  }

  static List<Map<String, Object>> availableEntries(List<Capability> capabilities) {
    return capabilities.stream().map(CapabilityViews::availableEntry).toList();
  }

  private static Map<String, Object> entry(Capability capability, boolean withAlwaysEnabled) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", capability.id());
    view.put("name", capability.name());
    view.put("description", capability.description());
    view.put("category", capability.category().id());
    view.put("scope", capability.scope().id());
    view.put("requiresConfig", capability.requiresConfig());
    if (capability.requiresConfig()) {
      view.put("configFields", capability.configFields());
    }
    view.put("tierRequirement", capability.tierRequirement().id());
    if (withAlwaysEnabled) {
      view.put("alwaysEnabled", capability.alwaysEnabled());
    }
    view.put("executable", capability.executable());
    view.put("configSchema", capability.config());
    return view;
  }
}
