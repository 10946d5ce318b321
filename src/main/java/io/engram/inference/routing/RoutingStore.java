package io.engram.inference.routing;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.net.URI;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;

/**
 * Providers, routed models and the server models an organization hides, in SQL. A scope is an
 * organization's id, or {@link #SERVER} for the operator's; every change bumps its scope's row in
 * {@code routing_versions} in the same transaction, which is what the other nodes poll.
 */
final class RoutingStore {
  /** The scope of the server's (the operator's) providers and models. */
  static final String SERVER = "";

  private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {};
  private static final TypeReference<List<RoutedModel.Deployment>> DEPLOYMENTS =
      new TypeReference<>() {};

  private final Database db;
  private final SecretBox secrets;

  RoutingStore(Database db, SecretBox secrets) {
    this.db = db;
    this.secrets = secrets;
  }

  static String scope(String orgId) {
    return orgId == null ? SERVER : orgId;
  }

  List<Provider> providers(String scope) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM inference_providers WHERE scope = :scope ORDER BY created_at, id")
        .bind("scope", scope)
        .map((rs, ctx) -> provider(rs))
        .list());
  }

  List<RoutedModel> models(String scope) {
    return db.read(
        h -> h.createQuery("SELECT * FROM inference_models WHERE scope = :scope ORDER BY model")
            .bind("scope", scope)
            .map((rs, ctx) -> model(rs))
            .list());
  }

  Set<String> hidden(String orgId) {
    return db.read(h ->
        new TreeSet<>(h.createQuery("SELECT model FROM hidden_server_models WHERE org_id = :org")
            .bind("org", orgId)
            .mapTo(String.class)
            .list()));
  }

  /** Adds or replaces a provider (by id), in one transaction with its scope's new version. */
  void save(Provider p, boolean created) {
    db.write(h -> {
      if (!created) {
        h.createUpdate("DELETE FROM inference_providers WHERE id = :id")
            .bind("id", p.id())
            .execute();
      }
      h.createUpdate("""
              INSERT INTO inference_providers (id, org_id, scope, name, kind, base_url, api_key,
                headers, api_version, timeout_seconds, reply_limit_field, created_at, updated_at)
              VALUES (:id, :org, :scope, :name, :kind, :url, :key, :headers, :version, :timeout,
                :limitField, :created, :updated)""")
          .bind("id", p.id())
          .bind("org", p.orgId())
          .bind("scope", scope(p.orgId()))
          .bind("name", p.name())
          .bind("kind", p.kind().wireName())
          .bind("url", p.baseUrl().toString())
          .bind("key", p.apiKey() == null ? null : secrets.seal(p.apiKey()))
          .bind("headers", p.headers().isEmpty() ? null : secrets.seal(Json.write(p.headers())))
          .bind("version", p.apiVersion())
          .bind("timeout", p.timeoutSeconds())
          .bind("limitField", p.replyLimitField())
          .bind("created", p.createdAt())
          .bind("updated", p.updatedAt())
          .execute();
      bump(h, scope(p.orgId()), p.updatedAt());
      return null;
    });
  }

  boolean deleteProvider(String scope, String id, long now) {
    return delete(
        "DELETE FROM inference_providers WHERE scope = :scope AND id = :id", scope, id, now);
  }

  /** Deletes one row of the scope's providers or models, with the scope's new version. */
  private boolean delete(String statement, String scope, String id, long now) {
    return db.write(h -> {
      int deleted =
          h.createUpdate(statement).bind("scope", scope).bind("id", id).execute();
      if (deleted > 0) {
        bump(h, scope, now);
      }
      return deleted > 0;
    });
  }

  void save(RoutedModel m, boolean created) {
    db.write(h -> {
      if (!created) {
        h.createUpdate("DELETE FROM inference_models WHERE id = :id")
            .bind("id", m.id())
            .execute();
      }
      h.createUpdate("""
              INSERT INTO inference_models (id, org_id, scope, model, type, context_length,
                capabilities, input_price, output_price, strategy, retries, deployments,
                created_at, updated_at)
              VALUES (:id, :org, :scope, :model, :type, :context, :capabilities, :inputPrice,
                :outputPrice, :strategy, :retries, :deployments, :created, :updated)""")
          .bind("id", m.id())
          .bind("org", m.orgId())
          .bind("scope", scope(m.orgId()))
          .bind("model", m.model())
          .bind("type", m.type().wireName())
          .bind("context", m.contextLength())
          .bind("capabilities", Json.write(m.capabilities()))
          .bind("inputPrice", m.inputPrice())
          .bind("outputPrice", m.outputPrice())
          .bind("strategy", m.strategy().wireName())
          .bind("retries", m.retries())
          .bind("deployments", Json.write(m.deployments()))
          .bind("created", m.createdAt())
          .bind("updated", m.updatedAt())
          .execute();
      bump(h, scope(m.orgId()), m.updatedAt());
      return null;
    });
  }

  boolean deleteModel(String scope, String id, long now) {
    return delete("DELETE FROM inference_models WHERE scope = :scope AND id = :id", scope, id, now);
  }

  /** Hides a server model from the organization (or shows it again). */
  void hide(String orgId, String model, boolean hidden, long now) {
    db.write(h -> {
      h.createUpdate("DELETE FROM hidden_server_models WHERE org_id = :org AND model = :model")
          .bind("org", orgId)
          .bind("model", model)
          .execute();
      if (hidden) {
        h.createUpdate("INSERT INTO hidden_server_models (org_id, model) VALUES (:org, :model)")
            .bind("org", orgId)
            .bind("model", model)
            .execute();
      }
      bump(h, orgId, now);
      return null;
    });
  }

  /** Scopes changed at or after {@code since} (epoch milliseconds), with their versions. */
  Map<String, Long> changedSince(long since) {
    Map<String, Long> changed = new LinkedHashMap<>();
    db.read(
        h -> h.createQuery("SELECT scope, version FROM routing_versions WHERE updated_at >= :since")
            .bind("since", since)
            .map((rs, ctx) -> changed.put(rs.getString(1), rs.getLong(2)))
            .list());
    return changed;
  }

  private static void bump(Handle h, String scope, long now) {
    int updated = h.createUpdate("""
            UPDATE routing_versions SET version = version + 1, updated_at = :now
            WHERE scope = :scope""").bind("scope", scope).bind("now", now).execute();
    if (updated == 0) {
      h.createUpdate("""
              INSERT INTO routing_versions (scope, version, updated_at) VALUES (:scope, 1, :now)""").bind("scope", scope).bind("now", now).execute();
    }
  }

  private Provider provider(ResultSet rs) throws SQLException {
    String key = rs.getString("api_key");
    String headers = rs.getString("headers");
    int seconds = rs.getInt("timeout_seconds");
    Integer timeout = rs.wasNull() ? null : seconds;
    return new Provider(
        rs.getString("id"),
        rs.getString("org_id"),
        rs.getString("name"),
        ProviderKind.of(rs.getString("kind")).orElseThrow(),
        URI.create(rs.getString("base_url")),
        key == null ? null : secrets.open(key),
        headers == null ? Map.of() : new LinkedHashMap<>(Json.read(secrets.open(headers), HEADERS)),
        rs.getString("api_version"),
        timeout,
        rs.getString("reply_limit_field"),
        rs.getLong("created_at"),
        rs.getLong("updated_at"));
  }

  private static RoutedModel model(ResultSet rs) throws SQLException {
    JsonNode capabilities = Json.read(rs.getString("capabilities"), JsonNode.class);
    double input = rs.getDouble("input_price");
    Double inputPrice = rs.wasNull() ? null : input;
    double output = rs.getDouble("output_price");
    Double outputPrice = rs.wasNull() ? null : output;
    return new RoutedModel(
        rs.getString("id"),
        rs.getString("org_id"),
        rs.getString("model"),
        RoutedModel.Type.valueOf(rs.getString("type").toUpperCase()),
        rs.getInt("context_length"),
        new RoutedModel.Capabilities(
            capabilities.path("tools").asBoolean(),
            capabilities.path("jsonSchema").asBoolean(),
            capabilities.path("vision").asBoolean(false)),
        inputPrice,
        outputPrice,
        RoutedModel.Strategy.valueOf(rs.getString("strategy").toUpperCase()),
        rs.getInt("retries"),
        new ArrayList<>(Json.read(rs.getString("deployments"), DEPLOYMENTS)),
        rs.getLong("created_at"),
        rs.getLong("updated_at"));
  }
}
