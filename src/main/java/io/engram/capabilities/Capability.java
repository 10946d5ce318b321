package io.engram.capabilities;

import io.engram.organizations.Tier;
import java.util.List;
import java.util.Map;

/**
 * One registry entry. {@code config} holds every config field in file order; {@code executable}
 * is true only when code registered a handler for the id ({@link CapabilityHandler}).
 */
public record Capability(
    String id,
    String name,
    String description,
    CapabilityCategory category,
    CapabilityScope scope,
    Tier tierRequirement,
    boolean alwaysEnabled,
    Map<String, ConfigSchemaField> config,
    boolean executable) {

  /** True when some config field is required: such a capability cannot be enabled without config. */
  public boolean requiresConfig() {
    return config.values().stream().anyMatch(ConfigSchemaField::required);
  }

  /** The names of the required config fields (the spec's {@code configFields}). */
  public List<String> configFields() {
    return config.values().stream()
        .filter(ConfigSchemaField::required)
        .map(ConfigSchemaField::name)
        .toList();
  }

  /** The same entry, executable (for an organization whose action bridge carries it out). */
  public Capability executableHere() {
    return new Capability(
        id, name, description, category, scope, tierRequirement, alwaysEnabled, config, true);
  }

  /** How validation messages name it: {@code Create Orders (create_orders)}. */
  public String label() {
    return name + " (" + id + ")";
  }
}
