package io.engram.settings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.organizations.AuditEntry;
import io.engram.organizations.AuditLog;
import io.engram.organizations.InstanceStore;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.crypto.SecretBox;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Handle;

/**
 * Organizations' settings: their configuration overrides ({@code /config}) and environment
 * variables ({@code /env}), stored, and in force: resolved per organization and cached, so a
 * request reads memory, not the database. A change made on this node is in force here at once;
 * other nodes see it through {@link #followChanges}, which a node runs every second (one indexed
 * query, whatever the number of organizations). Every change bumps the organization's settings
 * version and is audited in its transaction.
 */
public final class OrganizationConfigs {
  /** Changes written up to this long before a poll are read again: room for clock skew between nodes. */
  static final Duration SKEW_ALLOWANCE = Duration.ofSeconds(10);

  private static final String ACTIVE = "active";
  private static final String PENDING = "pending";

  /** What an organization stored, with the version of its settings. */
  public record Stored(Overrides overrides, Variables variables) {}

  private record Cached(Organization org, Stored stored, EffectiveConfig config) {}

  private final Database db;
  private final SystemDefaults system;
  private final SecretBox secrets;
  private final Clock clock;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();
  private final List<java.util.function.BiConsumer<String, EffectiveConfig>> resolved =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile java.util.function.Consumer<String> announce = orgId -> {};
  private volatile long polledSince;

  public OrganizationConfigs(Database db, SystemDefaults system, SecretBox secrets, Clock clock) {
    this.db = db;
    this.system = system;
    this.secrets = secrets;
    this.clock = clock;
    this.polledSince = clock.millis();
  }

  /** The settings in force for the organization (its plan as the caller's record has it). */
  public EffectiveConfig effective(Organization org) {
    Cached cached = cache.get(org.id());
    if (cached != null && cached.org().plan() == org.plan()) {
      return cached.config();
    }
    return cache(org, cached != null ? cached.stored() : load(org.id())).config();
  }

  /** What the organization stored itself, and its settings version. */
  public Stored stored(String orgId) {
    Cached cached = cache.get(orgId);
    return cached != null ? cached.stored() : load(orgId);
  }

  /**
   * Applies a PATCH /config body atomically: merged and validated, written with the next version
   * and an audit entry, in one transaction (two concurrent PATCHes of different fields both land).
   */
  public EffectiveConfig update(
      Organization org, JsonNode patch, String credentialId, String requestId) {
    return update(org, patch, credentialId, requestId, "config.update", h -> {});
  }

  /**
   * {@link #update(Organization, JsonNode, String, String)} audited as {@code action}, with
   * {@code alongside} written in the same transaction (the allowlist's descriptions).
   */
  public EffectiveConfig update(
      Organization org,
      JsonNode patch,
      String credentialId,
      String requestId,
      String action,
      java.util.function.Consumer<Handle> alongside) {
    return change(org, credentialId, requestId, action, (h, current) -> {
      Overrides merged = ConfigPatch.apply(current.overrides(), patch, org.plan(), system);
      writeOverrides(h, org.id(), merged);
      alongside.accept(h);
      return Map.of(
          "patch", patch,
          "before", Json.read(current.overrides().toJson(), JsonNode.class),
          "after", Json.read(merged.toJson(), JsonNode.class));
    });
  }

  /**
   * Sets variables of one layer, all or none: each is checked first (the first bad one is a 400
   * naming it). MAX_CONCURRENT_REQUESTS set by the organization is its configuration's
   * {@code quotas.max_concurrent_requests}, with that field's bounds.
   */
  public EffectiveConfig setVariables(
      Organization org,
      Variables.Layer layer,
      Map<String, String> values,
      String credentialId,
      String requestId) {
    values.forEach(VariableCatalog::checkSettable);
    return change(org, credentialId, requestId, "env.set", (h, current) -> {
      Map<String, String> plain = new LinkedHashMap<>(values);
      if (layer == Variables.Layer.ORGANIZATION && plain.containsKey(VariableCatalog.CONCURRENCY)) {
        ObjectNode patch = Json.MAPPER.createObjectNode();
        patch
            .putObject(ConfigField.MAX_CONCURRENT_REQUESTS.group())
            .put(
                ConfigField.MAX_CONCURRENT_REQUESTS.field(),
                Long.parseLong(plain.remove(VariableCatalog.CONCURRENCY).trim()));
        writeOverrides(
            h, org.id(), ConfigPatch.apply(current.overrides(), patch, org.plan(), system));
      }
      long customs = current.variables().of(layer).keySet().stream()
              .filter(name -> !plain.containsKey(name))
              .filter(name -> VariableCatalog.reach(name) == VariableCatalog.Reach.CUSTOM)
              .count()
          + plain.keySet().stream()
              .filter(name -> VariableCatalog.reach(name) == VariableCatalog.Reach.CUSTOM)
              .count();
      if (customs > VariableCatalog.MAX_CUSTOM) {
        throw ApiException.badRequest(
            "variables",
            "An organization may hold at most " + VariableCatalog.MAX_CUSTOM
                + " custom variables per layer");
      }
      plain.forEach((name, value) -> writeVariable(h, org.id(), layer, name, value, credentialId));
      return Map.of("layer", layer.id(), "set", masked(values));
    });
  }

  /** Removes a variable from one layer: the next lower layer applies again. 404 when unset. */
  public EffectiveConfig deleteVariable(
      Organization org, Variables.Layer layer, String name, String credentialId, String requestId) {
    return change(org, credentialId, requestId, "env.delete", (h, current) -> {
      boolean concurrency = layer == Variables.Layer.ORGANIZATION
          && name.equals(VariableCatalog.CONCURRENCY)
          && current.overrides().values().containsKey(ConfigField.MAX_CONCURRENT_REQUESTS);
      if (concurrency) {
        Map<ConfigField, Object> rest = new HashMap<>(current.overrides().values());
        rest.remove(ConfigField.MAX_CONCURRENT_REQUESTS);
        writeOverrides(h, org.id(), new Overrides(rest, current.overrides().version()));
      } else if (h.createUpdate(
                  "DELETE FROM organization_variables WHERE org_id = :org AND layer = :layer "
                      + "AND name = :name")
              .bind("org", org.id())
              .bind("layer", layer.id())
              .bind("name", name)
              .execute()
          == 0) {
        throw ApiException.notFound(
            "variable_not_found",
            "VARIABLE_NAME",
            "The " + layer.id() + " layer has no variable " + name);
      }
      return Map.of("layer", layer.id(), "deleted", name);
    });
  }

  /** An instance's layer: the configuration in force there, and the changes awaiting its restart. */
  public record InstanceLayer(
      EffectiveConfig config, Map<String, String> active, Map<String, Optional<String>> pending) {}

  /** The configuration in force on one of the organization's instances, with what is pending. */
  public InstanceLayer instanceLayer(Organization org, String instanceId) {
    Stored stored = stored(org.id());
    return db.read(h -> instanceLayer(h, org, instanceId, stored));
  }

  private InstanceLayer instanceLayer(
      Handle h, Organization org, String instanceId, Stored stored) {
    Map<String, String> active = new TreeMap<>();
    Map<String, Optional<String>> pending = new TreeMap<>();
    h.createQuery(
            "SELECT stage, name, value, sealed FROM instance_variables WHERE instance_id = :id")
        .bind("id", instanceId)
        .map((rs, ctx) -> new String[] {
          rs.getString("stage"),
          rs.getString("name"),
          opened(rs.getString("value"), rs.getInt("sealed"))
        })
        .forEach(row -> {
          if (row[0].equals(ACTIVE)) {
            active.put(row[1], row[2]);
          } else {
            pending.put(row[1], Optional.ofNullable(row[2]));
          }
        });
    EffectiveConfig config = EffectiveConfig.resolve(
        org.plan(), stored.overrides(), stored.variables().withInstance(active), system);
    return new InstanceLayer(config, active, pending);
  }

  /**
   * Sets variables of an instance, all or none, as pending: they take effect when the instance
   * restarts ({@link #restartInstance}). The same checks as the organization's layer.
   */
  public InstanceLayer setInstanceVariables(
      Organization org,
      String instanceId,
      Map<String, String> values,
      String credentialId,
      String requestId) {
    values.forEach(VariableCatalog::checkSettable);
    String concurrency = values.get(VariableCatalog.CONCURRENCY);
    if (concurrency != null) {
      // Checked against the plan's bounds, as the organization's own quota is.
      ObjectNode patch = Json.MAPPER.createObjectNode();
      patch
          .putObject(ConfigField.MAX_CONCURRENT_REQUESTS.group())
          .put(ConfigField.MAX_CONCURRENT_REQUESTS.field(), Long.parseLong(concurrency.trim()));
      ConfigPatch.apply(Overrides.NONE, patch, org.plan(), system);
    }
    change(org, credentialId, requestId, "instance.env.set", (h, current) -> {
      InstanceLayer layer = instanceLayer(h, org, instanceId, current);
      Set<String> customs = new HashSet<>(layer.active().keySet());
      layer.pending().forEach((name, value) -> {
        if (value.isEmpty()) {
          customs.remove(name);
        } else {
          customs.add(name);
        }
      });
      customs.addAll(values.keySet());
      customs.removeIf(name -> VariableCatalog.reach(name) != VariableCatalog.Reach.CUSTOM);
      if (customs.size() > VariableCatalog.MAX_CUSTOM) {
        throw ApiException.badRequest(
            "variables",
            "An instance may hold at most " + VariableCatalog.MAX_CUSTOM + " custom variables");
      }
      values.forEach((name, value) -> writeInstanceVariable(
          h, org.id(), instanceId, PENDING, name, value.trim(), credentialId));
      return Map.of("layer", "instance", "instance_id", instanceId, "pending", masked(values));
    });
    return instanceLayer(org, instanceId);
  }

  /** Marks an instance's variable for removal at its restart; 404 when it has none by that name. */
  public InstanceLayer deleteInstanceVariable(
      Organization org, String instanceId, String name, String credentialId, String requestId) {
    change(org, credentialId, requestId, "instance.env.delete", (h, current) -> {
      InstanceLayer layer = instanceLayer(h, org, instanceId, current);
      boolean active = layer.active().containsKey(name);
      if (!active && layer.pending().getOrDefault(name, Optional.empty()).isEmpty()) {
        throw ApiException.notFound(
            "variable_not_found",
            "VARIABLE_NAME",
            "Instance " + instanceId + " has no variable " + name);
      }
      if (active) {
        writeInstanceVariable(h, org.id(), instanceId, PENDING, name, null, credentialId);
      } else {
        deleteInstanceRows(h, instanceId, PENDING, name);
      }
      return Map.of("layer", "instance", "instance_id", instanceId, "removed", name);
    });
    return instanceLayer(org, instanceId);
  }

  /**
   * Restarts an instance's configuration: its pending values take effect at once and together (one
   * transaction), on every node within the settings poll. Nothing pending: a no-op, still audited.
   */
  public InstanceLayer restartInstance(
      Organization org, String instanceId, String credentialId, String requestId) {
    change(org, credentialId, requestId, "instance.restart", (h, current) -> {
      InstanceLayer layer = instanceLayer(h, org, instanceId, current);
      Map<String, String> applied = new LinkedHashMap<>();
      layer.pending().forEach((name, value) -> {
        applied.put(name, value.orElse(null));
        if (value.isEmpty()) {
          deleteInstanceRows(h, instanceId, ACTIVE, name);
        } else {
          writeInstanceVariable(h, org.id(), instanceId, ACTIVE, name, value.get(), credentialId);
        }
      });
      deleteInstanceRows(h, instanceId, PENDING, null);
      InstanceStore.markRestarted(h, instanceId, clock.millis());
      return Map.of("instance_id", instanceId, "applied", masked(applied));
    });
    return instanceLayer(org, instanceId);
  }

  /**
   * The organization's default instance changed: its requests now take that instance's layer. A
   * settings change like any other (versioned, audited, seen by every node).
   */
  public void defaultInstanceChanged(
      Organization org, String instanceId, String credentialId, String requestId) {
    change(
        org,
        credentialId,
        requestId,
        "instance.default",
        (h, current) -> Map.of("instance_id", instanceId));
  }

  /** Rows of one stage of an instance's variables: one name, or all when {@code name} is null. */
  private static void deleteInstanceRows(Handle h, String instanceId, String stage, String name) {
    var delete = h.createUpdate(
            "DELETE FROM instance_variables WHERE instance_id = :id AND stage = :stage"
                + (name == null ? "" : " AND name = :name"))
        .bind("id", instanceId)
        .bind("stage", stage);
    if (name != null) {
      delete.bind("name", name);
    }
    delete.execute();
  }

  private void writeInstanceVariable(
      Handle h,
      String orgId,
      String instanceId,
      String stage,
      String name,
      String value,
      String credentialId) {
    boolean sealed = value != null && VariableCatalog.looksSecret(name);
    h.createUpdate("""
            INSERT INTO instance_variables
              (instance_id, org_id, stage, name, value, sealed, updated_at, updated_by)
            VALUES (:instance, :org, :stage, :name, :value, :sealed, :now, :by)
            ON CONFLICT (instance_id, stage, name) DO UPDATE SET value = excluded.value,
              sealed = excluded.sealed, updated_at = excluded.updated_at,
              updated_by = excluded.updated_by """)
        .bind("instance", instanceId)
        .bind("org", orgId)
        .bind("stage", stage)
        .bind("name", name)
        .bind("value", sealed ? secrets.seal(value) : value)
        .bind("sealed", sealed ? 1 : 0)
        .bind("now", clock.millis())
        .bind("by", credentialId)
        .execute();
  }

  /** One change of an organization's settings: the writes {@code apply} makes, and its audit. */
  @FunctionalInterface
  private interface Change {
    Map<String, Object> apply(Handle h, Stored current);
  }

  private EffectiveConfig change(
      Organization org, String credentialId, String requestId, String action, Change change) {
    Stored next = db.write(h -> {
      // The settings row exists and is locked before anything is read, so concurrent changes
      // apply one after the other instead of one overwriting the other.
      h.createUpdate("""
              INSERT INTO organization_config (org_id, overrides, version, updated_at)
              VALUES (:org, '{}', 0, 0) ON CONFLICT (org_id) DO NOTHING""").bind("org", org.id()).execute();
      Stored current = read(h, org.id(), db.kind() == Database.Kind.POSTGRESQL);
      Map<String, Object> detail = change.apply(h, current);
      long now = clock.millis();
      h.createUpdate("""
              UPDATE organization_config SET version = version + 1, updated_at = :now,
                updated_by = :by
              WHERE org_id = :org""")
          .bind("now", now)
          .bind("by", credentialId)
          .bind("org", org.id())
          .execute();
      AuditLog.append(
          h,
          new AuditEntry(
              Ids.newId("aud", now),
              org.id(),
              clock.instant(),
              action,
              credentialId,
              requestId,
              Json.write(detail)));
      return read(h, org.id(), false);
    });
    announce.accept(org.id());
    return cache(org, next).config();
  }

  private static void writeOverrides(Handle h, String orgId, Overrides overrides) {
    h.createUpdate("UPDATE organization_config SET overrides = :overrides WHERE org_id = :org")
        .bind("overrides", overrides.toJson())
        .bind("org", orgId)
        .execute();
  }

  private void writeVariable(
      Handle h,
      String orgId,
      Variables.Layer layer,
      String name,
      String value,
      String credentialId) {
    boolean sealed = VariableCatalog.looksSecret(name);
    h.createUpdate("""
            INSERT INTO organization_variables
              (org_id, layer, name, value, sealed, updated_at, updated_by)
            VALUES (:org, :layer, :name, :value, :sealed, :now, :by)
            ON CONFLICT (org_id, layer, name) DO UPDATE SET value = excluded.value,
              sealed = excluded.sealed, updated_at = excluded.updated_at,
              updated_by = excluded.updated_by""")
        .bind("org", orgId)
        .bind("layer", layer.id())
        .bind("name", name)
        .bind("value", sealed ? secrets.seal(value.trim()) : value.trim())
        .bind("sealed", sealed ? 1 : 0)
        .bind("now", clock.millis())
        .bind("by", credentialId)
        .execute();
  }

  /** Values as the audit and the GET show them: a secret-looking name's value masked. */
  public static Map<String, String> masked(Map<String, String> values) {
    Map<String, String> shown = new LinkedHashMap<>();
    values.forEach(
        (name, value) -> shown.put(name, VariableCatalog.looksSecret(name) ? "********" : value));
    return shown;
  }

  /**
   * What to do when this node changed an organization's settings: tell the other nodes, so they
   * drop their copy at once rather than at their next poll.
   */
  /** Deletes a purged instance's variables, in the purge's transaction. */
  public static void forgetInstance(Handle h, String instanceId) {
    h.createUpdate("DELETE FROM instance_variables WHERE instance_id = :id")
        .bind("id", instanceId)
        .execute();
  }

  /**
   * Told each organization's configuration as it is resolved into force on this node (at its first
   * request and after every change), such as the logging, which follows its LOG_LEVEL.
   */
  public void onResolved(java.util.function.BiConsumer<String, EffectiveConfig> listener) {
    resolved.add(listener);
  }

  public void announceChangesWith(java.util.function.Consumer<String> announce) {
    this.announce = announce;
  }

  /** Drops the cached settings of an organization another node changed; they reload on next use. */
  public void forget(String orgId) {
    cache.remove(orgId);
  }

  /** Drops cached entries another node changed since the last poll; they reload on next use. */
  public void followChanges() {
    long startedAt = clock.millis();
    List<Map.Entry<String, Long>> changed = db.read(h -> h.createQuery(
            "SELECT org_id, version FROM organization_config WHERE updated_at >= :since")
        .bind("since", polledSince - SKEW_ALLOWANCE.toMillis())
        .map((rs, ctx) -> Map.entry(rs.getString(1), rs.getLong(2)))
        .list());
    for (Map.Entry<String, Long> change : changed) {
      cache.computeIfPresent(
          change.getKey(),
          (org, cached) ->
              cached.stored().overrides().version() == change.getValue() ? cached : null);
    }
    polledSince = startedAt;
  }

  private Cached cache(Organization org, Stored stored) {
    Cached fresh = new Cached(
        org,
        stored,
        EffectiveConfig.resolve(org.plan(), stored.overrides(), stored.variables(), system));
    cache.put(org.id(), fresh);
    resolved.forEach(listener -> listener.accept(org.id(), fresh.config()));
    return fresh;
  }

  private Stored load(String orgId) {
    return db.read(h -> read(h, orgId, false));
  }

  private Stored read(Handle h, String orgId, boolean lock) {
    Overrides overrides = h.createQuery(
            "SELECT overrides, version FROM organization_config WHERE org_id = :org"
                + (lock ? " FOR UPDATE" : ""))
        .bind("org", orgId)
        .map((rs, ctx) -> Overrides.fromJson(rs.getString(1), rs.getLong(2)))
        .findOne()
        .orElse(Overrides.NONE);
    Map<Variables.Layer, Map<String, String>> layers = new HashMap<>();
    for (Variables.Layer layer : Variables.Layer.values()) {
      layers.put(layer, new HashMap<>());
    }
    List<String[]> rows = h.createQuery(
            "SELECT layer, name, value, sealed FROM organization_variables WHERE org_id = :org")
        .bind("org", orgId)
        .map((rs, ctx) -> new String[] {
          rs.getString("layer"),
          rs.getString("name"),
          opened(rs.getString("value"), rs.getInt("sealed"))
        })
        .list();
    for (String[] row : rows) {
      if (row[0].equals(Variables.Layer.INSTANCE.id())) {
        continue; // instance variables live with their instance
      }
      layers
          .get(Variables.Layer.valueOf(row[0].toUpperCase(java.util.Locale.ROOT)))
          .put(row[1], row[2]);
    }
    Map<String, String> instance = new HashMap<>();
    h.createQuery("""
            SELECT v.name, v.value, v.sealed FROM instance_variables v
            JOIN instances i ON i.id = v.instance_id
            WHERE i.org_id = :org AND i.is_default = 1 AND i.status = 'running'
              AND v.stage = 'active'""")
        .bind("org", orgId)
        .map((rs, ctx) -> Map.entry(rs.getString(1), opened(rs.getString(2), rs.getInt(3))))
        .forEach(entry -> instance.put(entry.getKey(), entry.getValue()));
    return new Stored(
        overrides,
        new Variables(
            layers.get(Variables.Layer.ORGANIZATION),
            instance,
            layers.get(Variables.Layer.RUNTIME)));
  }

  private String opened(String value, int sealed) {
    return sealed == 1 && value != null ? secrets.open(value) : value;
  }
}
