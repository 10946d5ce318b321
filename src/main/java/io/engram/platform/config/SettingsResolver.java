package io.engram.platform.config;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Resolves a setting through the spec's layers: system defaults &lt; plan defaults &lt;
 * organization variables &lt; instance variables &lt; runtime overrides. The one place precedence
 * is decided, so routes and engines never re-implement it.
 */
public final class SettingsResolver {

  /** A resolved value and the layer it came from, so an operator can see why it applies. */
  public record Resolved(String name, String value, SettingLayer source) {
  }

  private final EnumMap<SettingLayer, Map<String, String>> layers = new EnumMap<>(SettingLayer.class);

  public SettingsResolver with(SettingLayer layer, Map<String, String> values) {
    SettingsResolver copy = new SettingsResolver();
    copy.layers.putAll(layers);
    copy.layers.put(layer, Map.copyOf(values));
    return copy;
  }

  public Optional<Resolved> resolve(String name) {
    List<SettingLayer> highestFirst = List.of(SettingLayer.values()).reversed();
    for (SettingLayer layer : highestFirst) {
      String value = layers.getOrDefault(layer, Map.of()).get(name);
      if (value != null && !value.isEmpty()) {
        return Optional.of(new Resolved(name, value, layer));
      }
    }
    return Optional.empty();
  }

  /** Every name any layer defines, resolved; sorted by name. */
  public Map<String, Resolved> resolveAll() {
    Map<String, Resolved> all = new TreeMap<>();
    layers.values().forEach(values -> values.keySet().forEach(name -> resolve(name).ifPresent(r -> all.put(name, r))));
    return all;
  }
}
