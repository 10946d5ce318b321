package io.engram.settings;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * An organization's environment variables in the two layers it has in the database: its own
 * ({@code organization}) and the operator's runtime overrides ({@code runtime}), name to value,
 * in the clear (sealed values are opened when read).
 */
public record Variables(Map<String, String> organization, Map<String, String> runtime) {
  public static final Variables NONE = new Variables(Map.of(), Map.of());

  public Variables {
    organization = Collections.unmodifiableMap(new TreeMap<>(organization));
    runtime = Collections.unmodifiableMap(new TreeMap<>(runtime));
  }

  /** The layers a route may write. */
  public enum Layer {
    ORGANIZATION,
    RUNTIME;

    public String id() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public Map<String, String> of(Layer layer) {
    return layer == Layer.ORGANIZATION ? organization : runtime;
  }
}
