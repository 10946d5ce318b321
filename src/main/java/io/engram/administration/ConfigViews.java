package io.engram.administration;

import io.engram.organizations.AuditEntry;
import io.engram.organizations.Organization;
import io.engram.platform.json.Json;
import io.engram.settings.ConfigField;
import io.engram.settings.EffectiveConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of an organization's configuration and of its audit trail. */
final class ConfigViews {
  private ConfigViews() {}

  /**
   * The configuration in force, grouped as a PATCH takes it (so a client can send back what it
   * read), then per field: where the value comes from, the default and its layer, the bounds.
   */
  static Map<String, Object> config(
      Organization org, EffectiveConfig config, long version, Map<String, Integer> inUse) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "organization.config");
    view.put("organization_id", org.id());
    view.put("plan", org.plan().id());
    view.put("version", version);
    Map<String, Object> fields = new LinkedHashMap<>();
    config.settings().forEach((field, setting) -> {
      @SuppressWarnings("unchecked")
      Map<String, Object> group = (Map<String, Object>)
          view.computeIfAbsent(field.group(), g -> new LinkedHashMap<String, Object>());
      group.put(field.field(), setting.value());
      fields.put(field.path(), field(field, setting));
    });
    view.put("fields", fields);
    view.put("in_use", inUse);
    return view;
  }

  private static Map<String, Object> field(ConfigField field, EffectiveConfig.Setting setting) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("value", setting.value());
    view.put("source", setting.source().wireName());
    view.put("default", setting.bounds().defaultValue());
    view.put("default_source", setting.bounds().defaultSource().wireName());
    if (field.kind() != ConfigField.Kind.SWITCH) {
      view.put("min", setting.bounds().min());
      view.put("max", setting.bounds().max());
    }
    view.put("unit", field.unit());
    return view;
  }

  static Map<String, Object> audit(List<AuditEntry> entries) {
    return Map.of(
        "object",
        "list",
        "data",
        entries.stream()
            .map(entry -> {
              Map<String, Object> view = new LinkedHashMap<>();
              view.put("id", entry.id());
              view.put("object", "audit_entry");
              view.put("at", entry.at().getEpochSecond());
              view.put("action", entry.action());
              view.put("credential_id", entry.credentialId());
              view.put("request_id", entry.requestId());
              view.put("detail", Json.read(entry.detail(), Object.class));
              return view;
            })
            .toList());
  }
}
