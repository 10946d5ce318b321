package io.engram.alerts;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The JSON of alerts, channels and deliveries (snake_case, times in Unix seconds). */
final class AlertViews {
  private AlertViews() {}

  static Map<String, Object> alert(Alert alert) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", alert.id());
    view.put("object", "alert");
    view.put("organization_id", alert.orgId());
    view.put("kind", alert.kind().id());
    view.put("state", alert.state().id());
    view.put("started_at", alert.startedAt().getEpochSecond());
    view.put("ended_at", alert.endedAt() == null ? null : alert.endedAt().getEpochSecond());
    view.put("value", alert.value());
    view.put("threshold", alert.threshold());
    view.put("message", alert.message());
    return view;
  }

  static Map<String, Object> channel(AlertChannel channel, String secret) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", channel.id());
    view.put("object", "alert_channel");
    view.put("type", channel.kind());
    view.put("url", channel.url().toString());
    view.put("created_at", channel.createdAt().getEpochSecond());
    if (secret != null) {
      view.put("secret", secret);
    }
    return view;
  }

  static Map<String, Object> delivery(Delivery delivery) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", delivery.id());
    view.put("object", "alert_delivery");
    view.put("channel_id", delivery.channelId());
    view.put("event", delivery.event());
    view.put("alert_id", delivery.alertId());
    view.put("attempt", delivery.attempt());
    view.put("outcome", delivery.outcome());
    view.put("response_status", delivery.responseStatus());
    view.put("error", delivery.error());
    view.put("at", delivery.at().getEpochSecond());
    return view;
  }

  static Map<String, Object> list(List<Map<String, Object>> data) {
    return Map.of("object", "list", "data", data);
  }
}
