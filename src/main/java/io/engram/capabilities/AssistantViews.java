package io.engram.capabilities;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The wire form of assistants and capability versions (camelCase, times as RFC 3339 strings). */
final class AssistantViews {

  private AssistantViews() {}

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
    CapabilitySet after = version.set();
    // The first version replaced nothing: everything in it was added.
    CapabilitySet before =
        previous == null ? new CapabilitySet(List.of(), Map.of()) : previous.set();
    view.put("before", previous == null ? null : set(before));
    view.put("after", set(after));
    view.put("added", after.without(before));
    view.put("removed", before.without(after));
    view.put("reconfigured", after.reconfiguredSince(before));
    return view;
  }

  static Map<String, Object> set(CapabilitySet set) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("capabilities", set.capabilities());
    view.put("capabilityConfigs", set.configsJson());
    return view;
  }
}
