package io.engram.settings;

import io.engram.organizations.Plan;
import io.engram.settings.ConfigField.Bounds;
import io.engram.settings.ConfigField.Source;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * An organization's configuration in force: each field's value, the layer it comes from and its
 * bounds. Built once per change of the organization's overrides or plan and then only read, so the
 * request path pays a map lookup, not a database read.
 */
public final class EffectiveConfig {

  /** One field in force. {@code value} null on a count: unlimited. */
  public record Setting(Object value, Source source, Bounds bounds) {}

  private final Map<ConfigField, Setting> settings;
  private final List<Cidr> allowedIps;

  private EffectiveConfig(Map<ConfigField, Setting> settings) {
    this.settings = Collections.unmodifiableMap(settings);
    @SuppressWarnings("unchecked")
    List<String> ranges = (List<String>) settings.get(ConfigField.ALLOWED_IPS).value();
    this.allowedIps = ranges.stream().map(Cidr::parse).toList();
  }

  /** The layers, lowest first: system or plan default, the organization's override, the instance. */
  public static EffectiveConfig resolve(Plan plan, Overrides overrides, SystemDefaults system) {
    Map<ConfigField, Setting> settings = new EnumMap<>(ConfigField.class);
    for (ConfigField field : ConfigField.values()) {
      Bounds bounds = field.bounds(plan.limits(), system);
      Object value = bounds.defaultValue();
      Source source = bounds.defaultSource();
      Object chosen = overrides.values().get(field);
      // An override above the ceiling (the plan was lowered since) yields to the plan's value.
      if (chosen != null
          && !(chosen instanceof Long n && bounds.max() != null && n > bounds.max())) {
        value = chosen;
        source = Source.ORGANIZATION;
      }
      if (field == ConfigField.MAX_CONCURRENT_REQUESTS
          && system.instanceConcurrency().isPresent()) {
        value = (long) system.instanceConcurrency().getAsInt();
        source = Source.INSTANCE;
      }
      settings.put(field, new Setting(value, source, bounds));
    }
    return new EffectiveConfig(settings);
  }

  public Setting setting(ConfigField field) {
    return settings.get(field);
  }

  public Map<ConfigField, Setting> settings() {
    return settings;
  }

  /** A count in force; {@link Long#MAX_VALUE} when unlimited. */
  public long count(ConfigField field) {
    Object value = settings.get(field).value();
    return value == null ? Long.MAX_VALUE : ((Number) value).longValue();
  }

  public Duration seconds(ConfigField field) {
    return Duration.ofSeconds(((Number) settings.get(field).value()).longValue());
  }

  public boolean webSocketsEnabled() {
    return (Boolean) settings.get(ConfigField.WEBSOCKET_ENABLED).value();
  }

  /** True when the address may call: the allowlist is empty (all may) or one range holds it. */
  public boolean allows(byte[] address) {
    if (allowedIps.isEmpty()) {
      return true;
    }
    for (Cidr range : allowedIps) {
      if (range.contains(address)) {
        return true;
      }
    }
    return false;
  }
}
