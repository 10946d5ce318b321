package io.engram.settings;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * An organization's environment variables in the layers it keeps in the database: its own
 * ({@code organization}), those in force on the instance in question ({@code instance}: the
 * default instance for the organization's requests) and the operator's runtime overrides
 * ({@code runtime}), name to value, in the clear (sealed values are opened when read).
 */
public record Variables(
    Map<String, String> organization, Map<String, String> instance, Map<String, String> runtime) {
  public static final Variables NONE = new Variables(Map.of(), Map.of(), Map.of());

  public Variables {
    organization = Collections.unmodifiableMap(new TreeMap<>(organization));
    instance = Collections.unmodifiableMap(new TreeMap<>(instance));
    runtime = Collections.unmodifiableMap(new TreeMap<>(runtime));
  }

  /** The layers a route may write. */
  public enum Layer {
    ORGANIZATION,
    INSTANCE,
    RUNTIME;

    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public Map<String, String> of(Layer layer) {
    return switch (layer) {
      case ORGANIZATION -> organization;
      case INSTANCE -> instance;
      case RUNTIME -> runtime;
    };
  }

  /** The same organization and runtime layers over another instance's variables. */
  public Variables withInstance(Map<String, String> instanceVariables) {
    return new Variables(organization, instanceVariables, runtime);
  }
}
