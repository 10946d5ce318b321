package io.engram.alerts;

import java.time.Clock;
import java.util.Map;

/** Tells an organization's channels that one of its alerts fired or resolved. */
public final class AlertNotifier {
  private final AlertChannels channels;
  private final WebhookSender sender;
  private final Clock clock;

  public AlertNotifier(AlertChannels channels, WebhookSender sender, Clock clock) {
    this.channels = channels;
    this.sender = sender;
    this.clock = clock;
  }

  public void notify(Alert alert) {
    String type = alert.state() == Alert.State.FIRING ? "alert.firing" : "alert.resolved";
    Map<String, Object> event = WebhookSender.event(
        type, alert.orgId(), AlertViews.alert(alert), clock.instant().getEpochSecond());
    channels.list(alert.orgId()).forEach(channel -> sender.sendLater(channel, alert.id(), event));
  }
}
