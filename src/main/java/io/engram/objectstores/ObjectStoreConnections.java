package io.engram.objectstores;

import com.fasterxml.jackson.core.type.TypeReference;
import io.engram.objectstores.ObjectStoreException.Kind;
import io.engram.platform.Ids;
import io.engram.platform.config.ObjectStoreEndpoints;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ErrorType;
import io.engram.platform.http.JsonBody;
import io.engram.platform.json.Json;
import io.engram.platform.net.Egress;
import io.engram.platform.net.OutboundBlocked;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * The external object stores instances connect. A connection is kept only after a real call
 * proved its credentials (list, write a probe object, delete it); its secret is sealed with the
 * server's key and never shown again. A URI ({@code s3://bucket/...}) is usable by an instance
 * only when that instance connected that bucket.
 */
public final class ObjectStoreConnections {
  /** A connected bucket or container, as shown: no secret. */
  public record Connection(
      String id,
      String orgId,
      String instanceId,
      ObjectStoreProvider provider,
      String bucket,
      Map<String, String> settings,
      Instant createdAt,
      Instant updatedAt) {

    public Map<String, Object> toView() {
      Map<String, Object> view = new LinkedHashMap<>();
      view.put("id", id);
      view.put("object", "storage.object_store");
      view.put("provider", provider.wireName());
      view.put("bucket", bucket);
      view.put("uri", provider.scheme() + "://" + bucket + "/");
      view.putAll(settings);
      view.put("created_at", createdAt.getEpochSecond());
      view.put("updated_at", updatedAt.getEpochSecond());
      return view;
    }
  }

  /** A connection kept, and whether it is new (or replaced the instance's one to that bucket). */
  public record Connected(Connection connection, boolean created) {}

  private static final TypeReference<Map<String, String>> STRINGS = new TypeReference<>() {};

  private final Database db;
  private final SecretBox secrets;
  private final ObjectStoreEndpoints endpoints;
  private final Clock clock;
  private final Egress egress;

  /** @param egress the organizations' outbound firewalls, which every store's calls pass first */
  public ObjectStoreConnections(
      Database db, SecretBox secrets, ObjectStoreEndpoints endpoints, Egress egress, Clock clock) {
    this.egress = egress;
    this.db = db;
    this.secrets = secrets;
    this.endpoints = endpoints;
    this.clock = clock;
  }

  /**
   * Checks the request, proves the credentials against the store, and keeps the connection
   * (replacing the instance's earlier one to the same bucket). A store that refuses is a 400
   * naming the field at fault; one that cannot be reached is a 502.
   */
  public Connected connect(
      String orgId, String instanceId, ObjectStoreProvider provider, JsonBody body, String by) {
    StoreCredentials credentials = StoreCredentials.parse(provider, body);
    admit(orgId, credentials);
    try (ObjectStore store = credentials.open(endpoints)) {
      store.probe();
    } catch (ObjectStoreException e) {
      throw refused(provider, e);
    }
    long now = clock.millis();
    String settings = Json.write(credentials.settings());
    String sealed = secrets.seal(Json.write(credentials.secret()));
    return db.write(h -> {
      Optional<Connection> old = find(h, instanceId, provider, credentials.bucket());
      String id = old.map(Connection::id).orElseGet(() -> Ids.newId("ost", now));
      h.createUpdate("""
              INSERT INTO object_stores (id, org_id, instance_id, provider, bucket, settings,
                secret, created_at, updated_at, created_by)
              VALUES (:id, :org, :instance, :provider, :bucket, :settings, :secret, :now, :now,
                :by)
              ON CONFLICT (instance_id, provider, bucket) DO UPDATE SET
                settings = excluded.settings, secret = excluded.secret,
                updated_at = excluded.updated_at""")
          .bind("id", id)
          .bind("org", orgId)
          .bind("instance", instanceId)
          .bind("provider", provider.wireName())
          .bind("bucket", credentials.bucket())
          .bind("settings", settings)
          .bind("secret", sealed)
          .bind("now", now)
          .bind("by", by)
          .execute();
      return new Connected(
          find(h, instanceId, provider, credentials.bucket()).orElseThrow(), old.isEmpty());
    });
  }

  public List<Connection> list(String instanceId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM object_stores WHERE instance_id = :instance ORDER BY id")
            .bind("instance", instanceId)
            .map((rs, c) -> connection(rs))
            .list());
  }

  /** Forgets a connection; false when the instance has none with that id. */
  public boolean disconnect(String instanceId, String id) {
    return db.write(h -> h.createUpdate(
                "DELETE FROM object_stores WHERE instance_id = :instance AND id = :id")
            .bind("instance", instanceId)
            .bind("id", id)
            .execute())
        > 0;
  }

  /** Whether the instance connected the URI's bucket. */
  public boolean connected(String instanceId, ObjectUri uri) {
    return db.read(h -> find(h, instanceId, uri.provider(), uri.bucket())).isPresent();
  }

  /** Whether some instance of the organization connected the URI's bucket. */
  public boolean reachable(String orgId, ObjectUri uri) {
    return db.read(h -> h.createQuery("""
                SELECT COUNT(*) FROM object_stores
                WHERE org_id = :org AND provider = :provider AND bucket = :bucket""")
            .bind("org", orgId)
            .bind("provider", uri.provider().wireName())
            .bind("bucket", uri.bucket())
            .mapTo(Integer.class)
            .one())
        > 0;
  }

  /** The store of the URI as the instance connected it; 400 naming {@code param} if it did not. */
  public ObjectStore open(String instanceId, ObjectUri uri, String param) {
    return openConnection(
        db.read(h -> find(h, instanceId, uri.provider(), uri.bucket())), uri, param);
  }

  /**
   * The store of the URI as an instance of the organization connected it, {@code preferred}'s own
   * connection first (retention reaches a store for every instance of its organization).
   */
  public ObjectStore openForOrganization(
      String orgId, String preferred, ObjectUri uri, String param) {
    Optional<Connection> found = db.read(h -> find(h, preferred, uri.provider(), uri.bucket())
        .or(() -> h.createQuery("""
                SELECT * FROM object_stores
                WHERE org_id = :org AND provider = :provider AND bucket = :bucket
                ORDER BY id LIMIT 1""")
            .bind("org", orgId)
            .bind("provider", uri.provider().wireName())
            .bind("bucket", uri.bucket())
            .map((rs, c) -> connection(rs))
            .findOne()));
    return openConnection(found, uri, param);
  }

  private ObjectStore openConnection(Optional<Connection> connection, ObjectUri uri, String param) {
    Connection found = connection.orElseThrow(() -> notConfigured(uri, param));
    String sealed = db.read(h -> h.createQuery("SELECT secret FROM object_stores WHERE id = :id")
        .bind("id", found.id())
        .mapTo(String.class)
        .one());
    Map<String, String> secret = strings(secrets.open(sealed));
    StoreCredentials credentials =
        new StoreCredentials(found.provider(), found.bucket(), found.settings(), secret);
    admit(found.orgId(), credentials);
    return credentials.open(endpoints);
  }

  /** The organization's outbound firewall admits each address the store's client will call. */
  private void admit(String orgId, StoreCredentials credentials) {
    try {
      credentials.destinations(endpoints).forEach(uri -> egress.admit(orgId, uri));
    } catch (OutboundBlocked e) {
      throw ApiException.forbidden("outbound_blocked", e.getMessage());
    }
  }

  /** The 400 of a URI whose bucket no instance connected. */
  public static ApiException notConfigured(ObjectUri uri, String param) {
    return ApiException.invalid(
        "object_store_not_configured",
        param,
        uri.provider().scheme() + "://" + uri.bucket() + " is not connected: connect it first"
            + " with POST /v1/nano/{nano_id}/storage/" + uri.provider().wireName());
  }

  /** How a store's refusal is told to the client. */
  public static ApiException refused(ObjectStoreProvider provider, ObjectStoreException e) {
    String param = switch (provider) {
      case S3 -> e.kind() == Kind.NOT_FOUND ? "bucket" : "secret_access_key";
      case GCS -> e.kind() == Kind.NOT_FOUND ? "bucket" : "credentials";
      case AZURE -> e.kind() == Kind.NOT_FOUND ? "container" : "access_key";
    };
    return switch (e.kind()) {
      case DENIED -> ApiException.invalid("object_store_denied", param, e.getMessage());
      case NOT_FOUND -> ApiException.invalid("object_store_not_found", param, e.getMessage());
      case UNREACHABLE, FAILED ->
        ApiException.of(
            502, ErrorType.SERVER_ERROR, "object_store_unreachable", e.getMessage(), null);
    };
  }

  private Optional<Connection> find(
      Handle h, String instanceId, ObjectStoreProvider provider, String bucket) {
    return h.createQuery("""
            SELECT * FROM object_stores
            WHERE instance_id = :instance AND provider = :provider AND bucket = :bucket""")
        .bind("instance", instanceId)
        .bind("provider", provider.wireName())
        .bind("bucket", bucket)
        .map((rs, c) -> connection(rs))
        .findOne();
  }

  private static Map<String, String> strings(String json) {
    try {
      return Json.MAPPER.readValue(json, STRINGS);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Connection connection(java.sql.ResultSet rs) throws java.sql.SQLException {
    return new Connection(
        rs.getString("id"),
        rs.getString("org_id"),
        rs.getString("instance_id"),
        ObjectStoreProvider.of(rs.getString("provider")).orElseThrow(),
        rs.getString("bucket"),
        strings(rs.getString("settings")),
        Instant.ofEpochMilli(rs.getLong("created_at")),
        Instant.ofEpochMilli(rs.getLong("updated_at")));
  }
}
