package io.engram.alerts;

import io.engram.platform.Ids;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.crypto.SigningSecrets;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.OutboundUrl;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * An organization's alert channels and their delivery log. A channel's signing secret is shown
 * once, at creation, and stored sealed; deliveries read it back to sign.
 */
public final class AlertChannels {
  static final int MAX_PER_ORGANIZATION = 20;
  private static final RowMapper<AlertChannel> CHANNEL = (rs, ctx) -> new AlertChannel(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("kind"),
      URI.create(rs.getString("url")),
      Rows.instant(rs, "created_at"),
      rs.getString("created_by"));
  private static final RowMapper<Delivery> DELIVERY = (rs, ctx) -> new Delivery(
      rs.getString("id"),
      rs.getString("channel_id"),
      rs.getString("event"),
      rs.getString("alert_id"),
      rs.getInt("attempt"),
      rs.getString("outcome"),
      (Integer) rs.getObject("response_status", Integer.class),
      rs.getString("error"),
      Rows.instant(rs, "at"));

  /** A channel just made, with its secret (shown this once). */
  public record Created(AlertChannel channel, String secret) {}

  private final Database db;
  private final SecretBox secrets;
  private final Clock clock;

  public AlertChannels(Database db, SecretBox secrets, Clock clock) {
    this.db = db;
    this.secrets = secrets;
    this.clock = clock;
  }

  public Created create(String orgId, String url, String createdBy) {
    URI uri = OutboundUrl.checked(url, "url");
    String secret = SigningSecrets.generate("whsec_");
    Instant now = clock.instant();
    AlertChannel channel = new AlertChannel(
        Ids.newId("chan", now.toEpochMilli()), orgId, "webhook", uri, now, createdBy);
    db.write(h -> {
      long existing = h.createQuery("SELECT COUNT(*) FROM alert_channels WHERE org_id = :org")
          .bind("org", orgId)
          .mapTo(Long.class)
          .one();
      if (existing >= MAX_PER_ORGANIZATION) {
        throw ApiException.badRequest(
            null, "An organization may have at most " + MAX_PER_ORGANIZATION + " alert channels");
      }
      return h.createUpdate("""
              INSERT INTO alert_channels (id, org_id, kind, url, secret, created_at, created_by)
              VALUES (:id, :org, 'webhook', :url, :secret, :at, :by)""")
          .bind("id", channel.id())
          .bind("org", orgId)
          .bind("url", uri.toString())
          .bind("secret", secrets.seal(secret))
          .bind("at", now.toEpochMilli())
          .bind("by", createdBy)
          .execute();
    });
    return new Created(channel, secret);
  }

  public List<AlertChannel> list(String orgId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM alert_channels WHERE org_id = :org ORDER BY id")
            .bind("org", orgId)
            .map(CHANNEL)
            .list());
  }

  /** The organization's channel; another organization's id does not exist for it (404). */
  public AlertChannel get(String orgId, String id) {
    return db.read(
            h -> h.createQuery("SELECT * FROM alert_channels WHERE org_id = :org AND id = :id")
                .bind("org", orgId)
                .bind("id", id)
                .map(CHANNEL)
                .findOne())
        .orElseThrow(() ->
            ApiException.notFound("channel_not_found", "channel_id", "No alert channel " + id));
  }

  public void delete(String orgId, String id) {
    get(orgId, id);
    db.write(h -> h.createUpdate("DELETE FROM alert_channels WHERE org_id = :org AND id = :id")
        .bind("org", orgId)
        .bind("id", id)
        .execute());
  }

  /** The channel's signing secret, opened. */
  String secret(AlertChannel channel) {
    return secrets.open(
        db.read(h -> h.createQuery("SELECT secret FROM alert_channels WHERE id = :id")
            .bind("id", channel.id())
            .mapTo(String.class)
            .one()));
  }

  void record(AlertChannel channel, Delivery delivery) {
    db.write(h -> h.createUpdate("""
            INSERT INTO alert_deliveries (id, channel_id, org_id, event, alert_id, attempt, outcome,
              response_status, error, at)
            VALUES (:id, :channel, :org, :event, :alert, :attempt, :outcome, :status, :error, :at)""")
        .bind("id", delivery.id())
        .bind("channel", channel.id())
        .bind("org", channel.orgId())
        .bind("event", delivery.event())
        .bind("alert", delivery.alertId())
        .bind("attempt", delivery.attempt())
        .bind("outcome", delivery.outcome())
        .bind("status", delivery.responseStatus())
        .bind("error", delivery.error())
        .bind("at", delivery.at().toEpochMilli())
        .execute());
  }

  /** The organizations that have a channel: those who asked to hear about their alerts. */
  Set<String> organizations() {
    return new java.util.HashSet<>(
        db.read(h -> h.createQuery("SELECT DISTINCT org_id FROM alert_channels")
            .mapTo(String.class)
            .list()));
  }

  /** The channel's delivery attempts, newest first. */
  public List<Delivery> deliveries(String orgId, String channelId, int limit) {
    get(orgId, channelId);
    return db.read(h -> h.createQuery(
            "SELECT * FROM alert_deliveries WHERE channel_id = :channel ORDER BY id DESC LIMIT :limit")
        .bind("channel", channelId)
        .bind("limit", limit)
        .map(DELIVERY)
        .list());
  }
}
