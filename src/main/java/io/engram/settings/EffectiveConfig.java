package io.engram.settings;

import io.engram.organizations.Plan;
import io.engram.settings.ConfigField.Bounds;
import io.engram.settings.ConfigField.Source;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An organization's configuration in force: each field's value, the layer it comes from and its
 * bounds. Built once per change of the organization's overrides or plan and then only read, so the
 * request path pays a map lookup, not a database read.
 */
public final class EffectiveConfig {

  /** One field in force. {@code value} null on a count: unlimited. */
  public record Setting(Object value, Source source, Bounds bounds) {}

  /** A variable in force: its value (null: none) and the layer it comes from. */
  public record Variable(String name, String value, Source source) {}

  private final Map<ConfigField, Setting> settings;
  private final Map<String, Variable> variables;
  private final List<Cidr> allowedIps;

  private EffectiveConfig(Map<ConfigField, Setting> settings, Map<String, Variable> variables) {
    this.settings = Collections.unmodifiableMap(settings);
    this.variables = Collections.unmodifiableMap(variables);
    @SuppressWarnings("unchecked")
    List<String> ranges = (List<String>) settings.get(ConfigField.ALLOWED_IPS).value();
    this.allowedIps = ranges.stream().map(Cidr::parse).toList();
  }

  /**
   * The layers, lowest first: system or plan default, the organization's override or variable,
   * the instance (its variables, and over them what the operator set in the server's environment:
   * the operator sized the machine the instance runs on), the operator's runtime override.
   */
  public static EffectiveConfig resolve(
      Plan plan, Overrides overrides, Variables variables, SystemDefaults system) {
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
      if (field == ConfigField.MAX_CONCURRENT_REQUESTS) {
        String instance = variables.instance().get(VariableCatalog.CONCURRENCY);
        if (instance != null) {
          value = Long.parseLong(instance);
          source = Source.INSTANCE;
        }
        if (system.instanceConcurrency().isPresent()) {
          value = (long) system.instanceConcurrency().getAsInt();
          source = Source.INSTANCE;
        }
        String runtime = variables.runtime().get(VariableCatalog.CONCURRENCY);
        if (runtime != null) {
          value = Long.parseLong(runtime);
          source = Source.RUNTIME;
        }
      }
      settings.put(field, new Setting(value, source, bounds));
    }
    return new EffectiveConfig(settings, variablesInForce(plan, variables, system, settings));
  }

  /**
   * Every variable of the spec's table and every custom one the organization set, each with its
   * value in force and its layer. MAX_CONCURRENT_REQUESTS is the configuration's
   * {@code quotas.max_concurrent_requests}: one setting, two names.
   */
  private static Map<String, Variable> variablesInForce(
      Plan plan, Variables variables, SystemDefaults system, Map<ConfigField, Setting> settings) {
    Map<String, Variable> inForce = new TreeMap<>();
    for (String name : VariableCatalog.specNames()) {
      if (name.equals(VariableCatalog.CONCURRENCY)) {
        Setting concurrency = settings.get(ConfigField.MAX_CONCURRENT_REQUESTS);
        inForce.put(
            name,
            new Variable(
                name,
                concurrency.value() == null ? null : concurrency.value().toString(),
                concurrency.source()));
        continue;
      }
      String value = VariableCatalog.spec(name).map(spec -> spec.defaultValue()).orElse("");
      Source source = Source.SYSTEM;
      if (name.equals("MAX_MODEL_SIZE_GB") && value.isEmpty()) {
        source = Source.PLAN; // the plan's storage bounds an upload
      }
      String[] layered = {
        variables.organization().get(name),
        variables.instance().get(name),
        system.instanceVariables().get(name),
        variables.runtime().get(name)
      };
      Source[] layers = {Source.ORGANIZATION, Source.INSTANCE, Source.INSTANCE, Source.RUNTIME};
      for (int i = 0; i < layered.length; i++) {
        if (layered[i] != null) {
          value = layered[i];
          source = layers[i];
        }
      }
      inForce.put(name, new Variable(name, value.isEmpty() ? null : value, source));
    }
    variables
        .organization()
        .forEach((name, value) -> inForce.computeIfAbsent(
            name, custom -> new Variable(custom, value, Source.ORGANIZATION)));
    variables.instance().forEach((name, value) -> {
      if (VariableCatalog.reach(name) == VariableCatalog.Reach.CUSTOM) {
        inForce.put(name, new Variable(name, value, Source.INSTANCE));
      }
    });
    variables
        .runtime()
        .forEach((name, value) -> inForce.merge(
            name, new Variable(name, value, Source.RUNTIME), (had, runtime) -> runtime));
    return inForce;
  }

  /** The variable in force, or empty when it has no value. */
  public java.util.Optional<String> variable(String name) {
    Variable variable = variables.get(name);
    return variable == null
        ? java.util.Optional.empty()
        : java.util.Optional.ofNullable(variable.value());
  }

  public Map<String, Variable> variables() {
    return variables;
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

  /** A number from 0 to 1 in force. */
  public double share(ConfigField field) {
    return ((Number) settings.get(field).value()).doubleValue();
  }

  public Duration seconds(ConfigField field) {
    return Duration.ofSeconds(((Number) settings.get(field).value()).longValue());
  }

  /** A switch's value in force (a {@link ConfigField.Kind#SWITCH} field). */
  public boolean switchedOn(ConfigField field) {
    return (Boolean) settings.get(field).value();
  }

  public boolean webSocketsEnabled() {
    return (Boolean) settings.get(ConfigField.WEBSOCKET_ENABLED).value();
  }

  /** The allowlist in force (empty: every address may call). */
  public List<Cidr> allowedIps() {
    return allowedIps;
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
