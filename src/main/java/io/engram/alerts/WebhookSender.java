package io.engram.alerts;

import io.engram.platform.Ids;
import io.engram.platform.crypto.SigningSecrets;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers alert events to webhook channels. Each request is signed: {@code
 * X-Engram-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body" under the channel's
 * secret>}, so a receiver can check the sender and refuse replays. A delivery that does not get a
 * 2xx is retried twice, after {@code base} and then four times {@code base}; every attempt is
 * logged and readable.
 */
public final class WebhookSender {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookSender.class);
  static final int ATTEMPTS = 3;

  private final AlertChannels channels;
  private final Clock clock;
  private final Duration base;
  private final Egress egress;
  private final HttpClient client = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(5))
      .followRedirects(HttpClient.Redirect.NEVER)
      .build();

  /** @param egress the organization's outbound firewall, which every delivery passes first */
  public WebhookSender(AlertChannels channels, Clock clock, Duration base, Egress egress) {
    this.egress = egress;
    this.channels = channels;
    this.clock = clock;
    this.base = base;
  }

  /** The event's body: its type, time, organization and, for an alert event, the alert. */
  static Map<String, Object> event(String type, String orgId, Map<String, Object> alert, long at) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", Ids.newId("evt", at * 1000));
    body.put("object", "event");
    body.put("type", type);
    body.put("created", at);
    body.put("organization_id", orgId);
    body.put("alert", alert);
    return body;
  }

  /** Sends in the background, retrying; returns at once. */
  public void sendLater(AlertChannel channel, String alertId, Map<String, Object> event) {
    Thread.ofVirtual().name("webhook-" + channel.id()).start(() -> {
      for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        String outcome = attempt(channel, alertId, event, attempt).outcome();
        if (outcome.equals("delivered") || outcome.equals("blocked") || attempt == ATTEMPTS) {
          return;
        }
        sleep(base.multipliedBy(attempt == 1 ? 1 : 4));
      }
    });
  }

  /**
   * A single attempt that is not retried (a channel's test send): attempt 1, and {@code failed}
   * rather than {@code retrying} when it fails.
   */
  public Delivery once(AlertChannel channel, String alertId, Map<String, Object> event) {
    return attempt(channel, alertId, event, 1, true);
  }

  /** One attempt, now; its record is logged whatever happens. */
  public Delivery attempt(
      AlertChannel channel, String alertId, Map<String, Object> event, int attempt) {
    return attempt(channel, alertId, event, attempt, attempt == ATTEMPTS);
  }

  private Delivery attempt(
      AlertChannel channel, String alertId, Map<String, Object> event, int attempt, boolean last) {
    String body = Json.write(event);
    long now = clock.instant().getEpochSecond();
    Integer status = null;
    String error = null;
    boolean blocked = false;
    try {
      egress.admit(channel.orgId(), channel.url());
      HttpRequest request = HttpRequest.newBuilder(channel.url())
          .timeout(Duration.ofSeconds(10))
          .header("Content-Type", "application/json")
          .header("User-Agent", "Engram-Alerts/1")
          .header("X-Engram-Event", (String) event.get("type"))
          .header("X-Engram-Delivery", (String) event.get("id"))
          .header("X-Engram-Signature", signature(channels.secret(channel), now, body))
          .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
          .build();
      status = client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
      if (status / 100 != 2) {
        error = "answered " + status;
      }
    } catch (OutboundBlocked e) {
      blocked = true; // retrying cannot help until the organization changes its rules
      error = e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      error = "interrupted";
    } catch (Exception e) {
      error = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
    }
    String outcome =
        error == null ? "delivered" : blocked ? "blocked" : last ? "failed" : "retrying";
    Delivery delivery = new Delivery(
        Ids.newId("dlv", clock.millis()),
        channel.id(),
        (String) event.get("type"),
        alertId,
        attempt,
        outcome,
        status,
        error,
        clock.instant());
    channels.record(channel, delivery);
    if (outcome.equals("failed")) {
      LOG.warn("alert webhook {} failed after {} attempts: {}", channel.id(), attempt, error);
    }
    return delivery;
  }

  /** The signature of a delivery (see {@link SigningSecrets#signature}). */
  public static String signature(String secret, long seconds, String body) {
    return SigningSecrets.signature(secret, seconds, body);
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
