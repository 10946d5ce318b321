package io.engram.settings;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.organizations.AuditEntry;
import io.engram.organizations.AuditLog;
import io.engram.organizations.Organization;
import io.engram.platform.Ids;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jdbi.v3.core.Handle;

/**
 * Organizations' configuration: stored overrides, and the configuration in force, cached per
 * organization so a request reads memory, not the database. A change made on this node is in force
 * here at once; other nodes see it through {@link #followChanges}, which a node runs every second
 * (one indexed query, whatever the number of organizations).
 */
public final class OrganizationConfigs {
  /** Changes written up to this long before a poll are read again: room for clock skew between nodes. */
  static final Duration SKEW_ALLOWANCE = Duration.ofSeconds(10);

  private record Cached(Organization org, Overrides overrides, EffectiveConfig config) {}

  private final Database db;
  private final SystemDefaults system;
  private final Clock clock;
  private final Map<String, Cached> cache = new ConcurrentHashMap<>();
  private volatile long polledSince;

  public OrganizationConfigs(Database db, SystemDefaults system, Clock clock) {
    this.db = db;
    this.system = system;
    this.clock = clock;
    this.polledSince = clock.millis();
  }

  /** The configuration in force for the organization (its plan as the caller's record has it). */
  public EffectiveConfig effective(Organization org) {
    Cached cached = cache.get(org.id());
    if (cached != null && cached.org().plan() == org.plan()) {
      return cached.config();
    }
    Overrides overrides = cached != null ? cached.overrides() : load(org.id());
    Cached fresh =
        new Cached(org, overrides, EffectiveConfig.resolve(org.plan(), overrides, system));
    cache.put(org.id(), fresh);
    return fresh.config();
  }

  public Overrides overrides(String orgId) {
    Cached cached = cache.get(orgId);
    return cached != null ? cached.overrides() : load(orgId);
  }

  /**
   * Applies a PATCH body atomically: read, merge and validate, write with the next version and an
   * audit entry, in one transaction (two concurrent PATCHes of different fields both land).
   */
  public EffectiveConfig update(
      Organization org, JsonNode patch, String credentialId, String requestId) {
    Overrides next = db.write(h -> {
      // The row exists and is locked before it is read, so concurrent PATCHes of different
      // fields apply one after the other instead of one overwriting the other.
      h.createUpdate("""
              INSERT INTO organization_config (org_id, overrides, version, updated_at)
              VALUES (:org, '{}', 0, 0) ON CONFLICT (org_id) DO NOTHING""").bind("org", org.id()).execute();
      Overrides current = read(h, org.id(), db.kind() == Database.Kind.POSTGRESQL);
      Overrides merged = ConfigPatch.apply(current, patch, org.plan(), system);
      Overrides written = new Overrides(merged.values(), current.version() + 1);
      long now = clock.millis();
      h.createUpdate("""
              INSERT INTO organization_config (org_id, overrides, version, updated_at, updated_by)
              VALUES (:org, :overrides, :version, :now, :by)
              ON CONFLICT (org_id) DO UPDATE SET overrides = excluded.overrides,
                version = excluded.version, updated_at = excluded.updated_at,
                updated_by = excluded.updated_by""")
          .bind("overrides", written.toJson())
          .bind("version", written.version())
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
              "config.update",
              credentialId,
              requestId,
              Json.write(Map.of(
                  "patch", patch,
                  "before", Json.read(current.toJson(), JsonNode.class),
                  "after", Json.read(written.toJson(), JsonNode.class)))));
      return written;
    });
    Cached fresh = new Cached(org, next, EffectiveConfig.resolve(org.plan(), next, system));
    cache.put(org.id(), fresh);
    return fresh.config();
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
          (org, cached) -> cached.overrides().version() == change.getValue() ? cached : null);
    }
    polledSince = startedAt;
  }

  private Overrides load(String orgId) {
    return db.read(h -> read(h, orgId, false));
  }

  private static Overrides read(Handle h, String orgId, boolean lock) {
    return h.createQuery("SELECT overrides, version FROM organization_config WHERE org_id = :org"
            + (lock ? " FOR UPDATE" : ""))
        .bind("org", orgId)
        .map((rs, ctx) -> Overrides.fromJson(rs.getString(1), rs.getLong(2)))
        .findOne()
        .orElse(Overrides.NONE);
  }
}
