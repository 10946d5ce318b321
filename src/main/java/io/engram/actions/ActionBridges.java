package io.engram.actions;

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
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * An organization's action bridges, one per capability. A bridge's signing secret is shown once,
 * at creation, and stored sealed; calls read it back to sign.
 */
public final class ActionBridges {
  public static final int DEFAULT_TIMEOUT_MILLIS = 10_000;
  public static final int MAX_TIMEOUT_MILLIS = 60_000;
  private static final RowMapper<ActionBridge> BRIDGE = (rs, ctx) -> new ActionBridge(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("capability_id"),
      URI.create(rs.getString("url")),
      rs.getInt("timeout_millis"),
      Rows.instant(rs, "created_at"),
      rs.getString("created_by"));

  /** A bridge just made, with its secret (shown this once). */
  public record Created(ActionBridge bridge, String secret) {}

  private final Database db;
  private final SecretBox secrets;
  private final Clock clock;

  public ActionBridges(Database db, SecretBox secrets, Clock clock) {
    this.db = db;
    this.secrets = secrets;
    this.clock = clock;
  }

  /** Registers the bridge of a capability; a capability that has one already is a 409. */
  public Created create(
      String orgId, String capabilityId, String url, int timeoutMillis, String createdBy) {
    URI uri = OutboundUrl.checked(url, "url");
    String secret = SigningSecrets.generate("brsec_");
    Instant now = clock.instant();
    ActionBridge bridge = new ActionBridge(
        Ids.newId("brg", now.toEpochMilli()),
        orgId,
        capabilityId,
        uri,
        timeoutMillis,
        now,
        createdBy);
    db.write(h -> {
      if (find(h, orgId, capabilityId).isPresent()) {
        throw ApiException.conflict(
            "bridge_exists",
            "Capability " + capabilityId + " has a bridge already; delete it to register another");
      }
      return h.createUpdate("""
              INSERT INTO action_bridges (id, org_id, capability_id, url, secret, timeout_millis,
                created_at, created_by)
              VALUES (:id, :org, :capability, :url, :secret, :timeout, :at, :by)""")
          .bind("id", bridge.id())
          .bind("org", orgId)
          .bind("capability", capabilityId)
          .bind("url", uri.toString())
          .bind("secret", secrets.seal(secret))
          .bind("timeout", timeoutMillis)
          .bind("at", now.toEpochMilli())
          .bind("by", createdBy)
          .execute();
    });
    return new Created(bridge, secret);
  }

  public List<ActionBridge> list(String orgId) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM action_bridges WHERE org_id = :org ORDER BY capability_id")
        .bind("org", orgId)
        .map(BRIDGE)
        .list());
  }

  /** The bridge of a capability in the organization, if it registered one. */
  public Optional<ActionBridge> forCapability(String orgId, String capabilityId) {
    return db.read(h -> find(h, orgId, capabilityId));
  }

  private static Optional<ActionBridge> find(
      org.jdbi.v3.core.Handle h, String orgId, String capabilityId) {
    return h.createQuery(
            "SELECT * FROM action_bridges WHERE org_id = :org AND capability_id = :capability")
        .bind("org", orgId)
        .bind("capability", capabilityId)
        .map(BRIDGE)
        .findOne();
  }

  /** Deletes the organization's bridge; another organization's id does not exist for it (404). */
  public void delete(String orgId, String id) {
    int deleted =
        db.write(h -> h.createUpdate("DELETE FROM action_bridges WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .execute());
    if (deleted == 0) {
      throw ApiException.notFound("bridge_not_found", "bridge_id", "No action bridge " + id);
    }
  }

  /** The bridge's signing secret, opened. */
  String secret(ActionBridge bridge) {
    return secrets.open(
        db.read(h -> h.createQuery("SELECT secret FROM action_bridges WHERE id = :id")
            .bind("id", bridge.id())
            .mapTo(String.class)
            .one()));
  }
}
