package io.engram.settings;

import io.engram.organizations.Organization;
import io.engram.platform.config.VariableSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The JSON of an organization's environment variables. */
public final class EnvViews {
  private EnvViews() {}

  /**
   * Every variable in force, each with its layer, whether the organization may set it, whether a
   * change is live or needs a restart, and its type and range; secret-looking values masked.
   */
  public static Map<String, Object> list(Organization org, EffectiveConfig config, long version) {
    return list(org, config, version, Map.of());
  }

  /**
   * The variables in force on an instance, with the changes waiting for its restart: a variable
   * with one shows {@code pending} ({@code value}, or {@code removal: true}) and
   * {@code restart_required: true}.
   */
  public static Map<String, Object> instance(
      Organization org,
      String instanceId,
      EffectiveConfig config,
      Map<String, Optional<String>> pending,
      long version) {
    Map<String, Object> view = list(org, config, version, pending);
    view.put("instance_id", instanceId);
    view.put("restart_required", !pending.isEmpty());
    return view;
  }

  private static Map<String, Object> list(
      Organization org,
      EffectiveConfig config,
      long version,
      Map<String, Optional<String>> pending) {
    List<Map<String, Object>> data = config.variables().values().stream()
        .map(variable -> withPending(variable(variable), pending.get(variable.name())))
        .collect(java.util.stream.Collectors.toCollection(java.util.ArrayList::new));
    pending.forEach((name, value) -> {
      if (!config.variables().containsKey(name)) {
        Map<String, Object> waiting = new LinkedHashMap<>();
        waiting.put("name", name);
        waiting.put("value", null);
        waiting.put("source", null);
        waiting.put("settable", true);
        waiting.put("live", false);
        waiting.put("restart_required", true);
        waiting.put("secret", VariableCatalog.looksSecret(name));
        waiting.put("type", "custom");
        data.add(withPending(waiting, value));
      }
    });
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("organization_id", org.id());
    view.put("version", version);
    view.put("data", data);
    return view;
  }

  private static Map<String, Object> withPending(
      Map<String, Object> view, Optional<String> pending) {
    if (pending != null) {
      boolean secret = VariableCatalog.looksSecret((String) view.get("name"));
      Map<String, Object> waiting = new LinkedHashMap<>();
      waiting.put("value", pending.map(v -> secret ? "********" : v).orElse(null));
      waiting.put("removal", pending.isEmpty());
      view.put("pending", waiting);
      view.put("restart_required", true);
    }
    return view;
  }

  private static Map<String, Object> variable(EffectiveConfig.Variable variable) {
    VariableCatalog.Reach reach = VariableCatalog.reach(variable.name());
    boolean secret = VariableCatalog.looksSecret(variable.name());
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("name", variable.name());
    view.put("value", secret && variable.value() != null ? "********" : variable.value());
    view.put("source", variable.source().wireName());
    view.put(
        "settable",
        reach == VariableCatalog.Reach.ORGANIZATION || reach == VariableCatalog.Reach.CUSTOM);
    view.put("live", reach != VariableCatalog.Reach.INSTANCE);
    view.put("restart_required", reach == VariableCatalog.Reach.INSTANCE);
    view.put("secret", secret);
    VariableCatalog.spec(variable.name())
        .ifPresentOrElse(
            spec -> {
              view.put("type", spec.type().name().toLowerCase(Locale.ROOT));
              view.put("range", range(spec));
              view.put("description", spec.description());
            },
            () -> view.put("type", "custom"));
    return view;
  }

  private static String range(VariableSpec spec) {
    if (!spec.options().isEmpty()) {
      return String.join(", ", spec.options());
    }
    String words = spec.rangeText().trim();
    return words.isEmpty() ? null : words;
  }
}
