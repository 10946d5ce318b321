package io.engram.capabilities;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The wire form of assistants and capability versions (camelCase, times as RFC 3339 strings). */
final class AssistantViews {

  private AssistantViews() {
  }

  static Map<String, Object> assistant(Assistant assistant) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("_id", assistant.id());
    view.put("name", assistant.name());
    view.put("type", assistant.type().id());
    view.put("ownerId", assistant.ownerUserId());
    view.put("capabilities", assistant.capabilities().capabilities());
    view.put("capabilityConfigs", assistant.capabilities().configsJson());
    view.put("version", assistant.version());
    view.put("createdAt", assistant.createdAt().toString());
    view.put("updatedAt", assistant.updatedAt().toString());
    return view;
  }

  /** One history entry: the set a version put in force, what it replaced, and who made it. */
  static Map<String, Object> version(CapabilityVersion version, CapabilityVersion previous) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("version", version.version());
    view.put("changedAt", version.changedAt().toString());
    Map<String, Object> actor = new LinkedHashMap<>();
    actor.put("kind", version.actor().kind());
    actor.put("credentialId", version.actor().credentialId());
    actor.put("userId", version.actor().userId());
    view.put("changedBy", actor);
    view.put("requestId", version.requestId());
    view.put("before", previous == null ? null : set(previous.set()));
    view.put("after", set(version.set()));
    CapabilitySet before = previous == null ? null : previous.set();
    view.put("added", before == null ? version.set().capabilities() : version.set().without(before));
    view.put("removed", before == null ? List.of() : before.without(version.set()));
    view.put("reconfigured", before == null ? List.of() : version.set().reconfiguredSince(before));
    return view;
  }

  static Map<String, Object> set(CapabilitySet set) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("capabilities", set.capabilities());
    view.put("capabilityConfigs", set.configsJson());
    return view;
  }
}
