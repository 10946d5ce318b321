package io.engram.memory;

import io.engram.organizations.Organization;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * SQL for an organization's memory settings (the table {@code memory_settings}): its write mode,
 * what encodes do with near duplicates, and the default time to live per memory kind.
 */
public final class MemorySettingsStore {
  private final Database db;

  public MemorySettingsStore(Database db) {
    this.db = db;
  }

  /** An organization's memory settings: its write mode and what encodes do with near duplicates. */
  public record Settings(
      WriteMode writeMode, NearDuplicates nearDuplicates, Map<MemoryKind, Duration> ttlByKind) {
    static final Settings DEFAULT =
        new Settings(WriteMode.DIRECT, NearDuplicates.DEFAULT, Map.of());

    /** As in force for the organization: below a paid plan encodes write directly whatever it set. */
    public Settings inForceFor(Organization org) {
      return org.plan().isPaid() ? this : new Settings(WriteMode.DIRECT, nearDuplicates, ttlByKind);
    }

    /** When a memory of this kind written {@code now} expires by default; null: never. */
    public Instant defaultExpiry(MemoryKind kind, Instant now) {
      Duration ttl = ttlByKind.get(kind);
      return ttl == null ? null : now.plus(ttl);
    }
  }

  /** The stored {@code ttl_by_kind} JSON as durations (unknown kinds are skipped). */
  private static Map<MemoryKind, Duration> ttls(String json) {
    Map<MemoryKind, Duration> ttls = new EnumMap<>(MemoryKind.class);
    if (json != null) {
      Json.read(json, com.fasterxml.jackson.databind.JsonNode.class)
          .properties()
          .forEach(entry -> MemoryKind.fromId(entry.getKey())
              .ifPresent(
                  kind -> ttls.put(kind, Duration.ofSeconds(entry.getValue().asLong()))));
    }
    return Map.copyOf(ttls);
  }

  /** The organization's memory settings, in one read (the defaults until it set any). */
  public Settings settings(String orgId) {
    return db.read(h -> h.createQuery(
                "SELECT write_mode, near_duplicates, near_duplicate_similarity, ttl_by_kind"
                    + " FROM memory_settings WHERE org_id = :org")
            .bind("org", orgId)
            .map((rs, ctx) -> {
              String action = rs.getString("near_duplicates");
              double similarity = rs.getDouble("near_duplicate_similarity");
              boolean similaritySet = !rs.wasNull(); // asked at once: wasNull is of the last read
              return new Settings(
                  WriteMode.fromId(rs.getString("write_mode")).orElse(WriteMode.DIRECT),
                  new NearDuplicates(
                      action == null
                          ? NearDuplicates.Action.KEEP
                          : NearDuplicates.Action.fromId(action).orElse(NearDuplicates.Action.KEEP),
                      similaritySet ? similarity : NearDuplicates.DEFAULT_SIMILARITY),
                  ttls(rs.getString("ttl_by_kind")));
            })
            .findOne())
        .orElse(Settings.DEFAULT);
  }

  public void setNearDuplicates(
      String orgId, NearDuplicates near, WriteMode mode, String updatedBy, Instant at) {
    db.write(h -> h.createUpdate("""
            INSERT INTO memory_settings (org_id, write_mode, near_duplicates, near_duplicate_similarity,
                                         updated_at, updated_by)
            VALUES (:org, :mode, :near, :similarity, :at, :by)
            ON CONFLICT (org_id) DO UPDATE SET near_duplicates = :near,
              near_duplicate_similarity = :similarity, updated_at = :at, updated_by = :by""")
        .bind("org", orgId)
        .bind("mode", mode.id())
        .bind("near", near.action().id())
        .bind("similarity", near.similarity())
        .bind("at", at.toEpochMilli())
        .bind("by", updatedBy)
        .execute());
  }

  /** Sets the organization's default time to live per kind (a kind left out has none). */
  public void setTtlByKind(
      String orgId, Map<MemoryKind, Duration> ttls, WriteMode mode, String updatedBy, Instant at) {
    Map<String, Long> json = new TreeMap<>();
    ttls.forEach((kind, ttl) -> json.put(kind.id(), ttl.toSeconds()));
    db.write(h -> h.createUpdate("""
            INSERT INTO memory_settings (org_id, write_mode, ttl_by_kind, updated_at, updated_by)
            VALUES (:org, :mode, :ttls, :at, :by)
            ON CONFLICT (org_id) DO UPDATE SET ttl_by_kind = :ttls, updated_at = :at, updated_by = :by""")
        .bind("org", orgId)
        .bind("mode", mode.id())
        .bind("ttls", Json.write(json))
        .bind("at", at.toEpochMilli())
        .bind("by", updatedBy)
        .execute());
  }

  public void setWriteMode(String orgId, WriteMode mode, String updatedBy, Instant at) {
    db.write(h -> h.createUpdate("""
            INSERT INTO memory_settings (org_id, write_mode, updated_at, updated_by) VALUES (:org, :mode, :at, :by)
            ON CONFLICT (org_id) DO UPDATE SET write_mode = :mode, updated_at = :at, updated_by = :by""")
        .bind("org", orgId)
        .bind("mode", mode.id())
        .bind("at", at.toEpochMilli())
        .bind("by", updatedBy)
        .execute());
  }
}
