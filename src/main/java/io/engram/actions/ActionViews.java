package io.engram.actions;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of action bridges and capability executions. */
final class ActionViews {
  private ActionViews() {}

  static Map<String, Object> bridge(ActionBridge bridge, String secret) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", bridge.id());
    view.put("object", "action_bridge");
    view.put("capability", bridge.capabilityId());
    view.put("url", bridge.url().toString());
    view.put("timeout_ms", bridge.timeoutMillis());
    view.put("created_at", bridge.createdAt().getEpochSecond());
    view.put("created_by", bridge.createdBy());
    if (secret != null) {
      view.put("secret", secret); // shown this once
    }
    return view;
  }

  static Map<String, Object> execution(Execution e) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", e.id());
    view.put("object", "capability_execution");
    view.put("assistant_id", e.assistantId());
    view.put("capability", e.capabilityId());
    view.put("capability_set_version", e.setVersion());
    view.put("tool_call_id", e.toolCallId());
    view.put("arguments", e.arguments());
    view.put("status", e.status().wireName());
    view.put("result", e.result());
    view.put("reason", e.reason());
    view.put("credential_id", e.credentialId());
    view.put("request_id", e.requestId());
    view.put("created_at", e.createdAt().getEpochSecond());
    view.put("decided_by", e.decidedBy());
    view.put("decided_at", e.decidedAt() == null ? null : e.decidedAt().getEpochSecond());
    return view;
  }

  static Map<String, Object> list(List<Map<String, Object>> data) {
    return Map.of("object", "list", "data", data);
  }
}
