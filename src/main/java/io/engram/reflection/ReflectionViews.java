package io.engram.reflection;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON shapes of reflection's routes (docs/reflection.md shows each). */
final class ReflectionViews {
  private ReflectionViews() {}

  static Map<String, Object> event(ReflectionEvent e) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", e.id());
    view.put("object", "reflection.event");
    view.put("runId", e.runId());
    view.put("kind", e.change().process().id());
    view.put("change", e.change().id());
    view.put("memoryId", e.memoryId());
    view.put("relatedMemoryId", e.relatedMemoryId());
    view.put("outcome", e.outcome().id());
    view.put("reason", e.reason());
    view.put("before", json(e.beforeJson()));
    view.put("after", json(e.afterJson()));
    view.put("at", e.at().toString());
    view.put(
        "undone",
        e.undoneAt() == null ? null : Map.of("at", e.undoneAt().toString(), "by", e.undoneBy()));
    return view;
  }

  /** A run's audit: trigger, settings in force, counts, duration and (the first of) its changes. */
  static Map<String, Object> audit(ReflectionRun run, List<ReflectionEvent> changes, int limit) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", run.id());
    view.put("object", "reflection.audit");
    view.put("status", run.status().id());
    view.put("dryRun", run.dryRun());
    Map<String, Object> trigger = new LinkedHashMap<>();
    trigger.put("type", run.trigger().id());
    trigger.put("credentialId", run.credentialId());
    trigger.put("userId", run.userId());
    trigger.put("requestId", run.requestId());
    trigger.put("node", run.node());
    view.put("trigger", trigger);
    JsonNode inForce = json(run.settingsJson());
    view.put("processes", inForce.path("processes"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) inForce).remove("processes");
    view.put("settings", inForce);
    view.put("startedAt", run.startedAt().toString());
    view.put("finishedAt", run.finishedAt() == null ? null : run.finishedAt().toString());
    view.put(
        "durationMs",
        run.finishedAt() == null
            ? null
            : Duration.between(run.startedAt(), run.finishedAt()).toMillis());
    view.put("examined", run.examined());
    view.put("counts", run.countsJson() == null ? null : json(run.countsJson()));
    view.put("error", run.error());
    view.put(
        "undone",
        run.undoneAt() == null
            ? null
            : Map.of("at", run.undoneAt().toString(), "by", run.undoneBy()));
    if (changes != null) {
      view.put(
          "changes", changes.stream().limit(limit).map(ReflectionViews::event).toList());
      view.put("changesTruncated", changes.size() > limit);
      view.put("allChanges", "/api/memory/reflection/events?run=" + run.id());
    }
    return view;
  }

  private static JsonNode json(String text) {
    return text == null ? null : Json.read(text, JsonNode.class);
  }
}
