package io.engram.administration;

import io.engram.organizations.Organization;
import io.engram.platform.config.VariableSpec;
import io.engram.settings.EffectiveConfig;
import io.engram.settings.VariableCatalog;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The JSON of an organization's environment variables. */
final class EnvViews {
  private EnvViews() {}

  /**
   * Every variable in force, each with its layer, whether the organization may set it, whether a
   * change is live or needs a restart, and its type and range; secret-looking values masked.
   */
  static Map<String, Object> list(Organization org, EffectiveConfig config, long version) {
    List<Map<String, Object>> data =
        config.variables().values().stream().map(EnvViews::variable).toList();
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("organization_id", org.id());
    view.put("version", version);
    view.put("data", data);
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
