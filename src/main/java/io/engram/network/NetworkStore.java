package io.engram.network;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.organizations.AuditEntry;
import io.engram.organizations.AuditLog;
import io.engram.platform.Ids;
import io.engram.platform.json.Json;
import io.engram.store.Database;
import io.engram.store.Rows;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.mapper.RowMapper;

/**
 * The network records. Each change runs in a transaction that also bumps the network version and
 * appends the organization's audit entry ({@link #changed}): nodes reload when the version moves.
 */
final class NetworkStore {
  private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

  private static final RowMapper<CustomDomain> DOMAIN = (rs, ctx) -> new CustomDomain(
      rs.getString("id"),
      rs.getString("org_id"),
      rs.getString("domain"),
      DomainState.fromWire(rs.getString("state")),
      rs.getString("token"),
      Rows.instant(rs, "created_at"),
      Rows.nullableInstant(rs, "verified_at"),
      Rows.nullableInstant(rs, "last_checked_at"),
      Rows.instant(rs, "next_check_at"),
      rs.getString("failure_reason"));

  private static final RowMapper<StoredCertificate> CERTIFICATE =
      (rs, ctx) -> new StoredCertificate(
          rs.getString("id"),
          rs.getString("org_id"),
          rs.getString("subject"),
          Arrays.asList(rs.getString("names").split(",")),
          Rows.instant(rs, "not_before"),
          Rows.instant(rs, "not_after"),
          rs.getString("fingerprint"),
          rs.getString("key_type"),
          rs.getString("chain_pem"),
          rs.getString("sealed_key"),
          Rows.instant(rs, "created_at"));

  private static final RowMapper<NetworkLink> LINK = (rs, ctx) -> new NetworkLink(
      rs.getString("id"),
      rs.getString("org_id"),
      NetworkLink.Kind.valueOf(rs.getString("kind")),
      rs.getString("provider"),
      Json.read(rs.getString("request"), JsonNode.class),
      NetworkLink.State.fromWire(rs.getString("state")),
      Json.MAPPER.convertValue(Json.read(rs.getString("instructions"), JsonNode.class), OBJECT),
      rs.getString("failure_reason"),
      Rows.instant(rs, "created_at"),
      Rows.instant(rs, "updated_at"));

  private final Database db;

  NetworkStore(Database db) {
    this.db = db;
  }

  Database db() {
    return db;
  }

  long version() {
    return db.read(h -> h.createQuery("SELECT version FROM network_version WHERE id = 1")
        .mapTo(Long.class)
        .one());
  }

  /** Bumps the version and audits the change, in the caller's transaction. */
  static void changed(Handle h, Instant at, String orgId, String action, Audit who, Object detail) {
    h.createUpdate("UPDATE network_version SET version = version + 1 WHERE id = 1")
        .execute();
    AuditLog.append(
        h,
        new AuditEntry(
            Ids.newId("aud", at.toEpochMilli()),
            orgId,
            at,
            action,
            who.credentialId(),
            who.requestId(),
            Json.write(detail)));
  }

  /** Who made a change: the credential and the request, for the audit trail. */
  record Audit(String credentialId, String requestId) {
    static final Audit SYSTEM = new Audit(null, null);
  }

  // --- firewall -------------------------------------------------------------------------------

  Map<String, FirewallRules> firewalls() {
    return db.read(h -> {
      Map<String, FirewallRules> all = new HashMap<>();
      h.createQuery("SELECT org_id, rules FROM firewall_rules")
          .map((rs, c) -> Map.entry(rs.getString("org_id"), rs.getString("rules")))
          .forEach(row -> all.put(row.getKey(), FirewallRules.fromJson(row.getValue())));
      return all;
    });
  }

  static FirewallRules firewall(Handle h, String orgId) {
    return h.createQuery("SELECT rules FROM firewall_rules WHERE org_id = :org")
        .bind("org", orgId)
        .mapTo(String.class)
        .findOne()
        .map(FirewallRules::fromJson)
        .orElse(FirewallRules.NONE);
  }

  static void writeFirewall(Handle h, String orgId, FirewallRules rules, Instant at) {
    h.createUpdate("DELETE FROM firewall_rules WHERE org_id = :org")
        .bind("org", orgId)
        .execute();
    if (!rules.rules().isEmpty()) {
      h.createUpdate(
              "INSERT INTO firewall_rules (org_id, rules, updated_at) VALUES (:org, :rules, :at)")
          .bind("org", orgId)
          .bind("rules", rules.toJson())
          .bind("at", at.toEpochMilli())
          .execute();
    }
  }

  // --- allowlist descriptions -------------------------------------------------------------------

  Map<String, String> allowlistNotes(String orgId) {
    return db.read(h -> {
      Map<String, String> notes = new LinkedHashMap<>();
      h.createQuery("SELECT cidr, description FROM allowlist_notes WHERE org_id = :org")
          .bind("org", orgId)
          .map((rs, c) -> Map.entry(rs.getString("cidr"), rs.getString("description")))
          .forEach(row -> notes.put(row.getKey(), row.getValue()));
      return notes;
    });
  }

  static void replaceAllowlistNotes(Handle h, String orgId, Map<String, String> notes) {
    h.createUpdate("DELETE FROM allowlist_notes WHERE org_id = :org")
        .bind("org", orgId)
        .execute();
    notes.forEach((cidr, description) -> h.createUpdate(
            "INSERT INTO allowlist_notes (org_id, cidr, description) VALUES (:org, :cidr, :d)")
        .bind("org", orgId)
        .bind("cidr", cidr)
        .bind("d", description)
        .execute());
  }

  // --- domains ----------------------------------------------------------------------------------

  List<CustomDomain> domains(String orgId) {
    return db.read(h -> domains(h, orgId));
  }

  static List<CustomDomain> domains(Handle h, String orgId) {
    return h.createQuery("SELECT * FROM custom_domains WHERE org_id = :org ORDER BY id")
        .bind("org", orgId)
        .map(DOMAIN)
        .list();
  }

  List<CustomDomain> allDomains() {
    return db.read(
        h -> h.createQuery("SELECT * FROM custom_domains").map(DOMAIN).list());
  }

  static Optional<CustomDomain> domain(Handle h, String orgId, String id) {
    return h.createQuery("SELECT * FROM custom_domains WHERE org_id = :org AND id = :id")
        .bind("org", orgId)
        .bind("id", id)
        .map(DOMAIN)
        .findOne();
  }

  static Optional<CustomDomain> domainNamed(Handle h, String domain) {
    return h.createQuery("SELECT * FROM custom_domains WHERE domain = :domain")
        .bind("domain", domain)
        .map(DOMAIN)
        .findOne();
  }

  List<CustomDomain> domainsDue(Instant now, int limit) {
    return db.read(h -> h.createQuery("""
            SELECT * FROM custom_domains WHERE next_check_at <= :now AND state <> 'failed'
            ORDER BY next_check_at LIMIT :limit""")
        .bind("now", now.toEpochMilli())
        .bind("limit", limit)
        .map(DOMAIN)
        .list());
  }

  static void insertDomain(Handle h, CustomDomain d) {
    h.createUpdate("""
            INSERT INTO custom_domains (id, org_id, domain, state, token, created_at, verified_at,
              last_checked_at, next_check_at, failure_reason)
            VALUES (:id, :org, :domain, :state, :token, :created, NULL, NULL, :next, NULL)""")
        .bind("id", d.id())
        .bind("org", d.orgId())
        .bind("domain", d.domain())
        .bind("state", d.state().wireName())
        .bind("token", d.token())
        .bind("created", d.createdAt().toEpochMilli())
        .bind("next", d.nextCheckAt().toEpochMilli())
        .execute();
  }

  static void updateDomain(Handle h, CustomDomain d) {
    h.createUpdate("""
            UPDATE custom_domains SET state = :state, verified_at = :verified,
              last_checked_at = :checked, next_check_at = :next, failure_reason = :reason
            WHERE id = :id""")
        .bind("id", d.id())
        .bind("state", d.state().wireName())
        .bind("verified", d.verifiedAt() == null ? null : d.verifiedAt().toEpochMilli())
        .bind("checked", d.lastCheckedAt() == null ? null : d.lastCheckedAt().toEpochMilli())
        .bind("next", d.nextCheckAt().toEpochMilli())
        .bind("reason", d.failureReason())
        .execute();
  }

  static void deleteDomain(Handle h, String id) {
    h.createUpdate("DELETE FROM custom_domains WHERE id = :id").bind("id", id).execute();
  }

  // --- certificates -----------------------------------------------------------------------------

  List<StoredCertificate> certificates(String orgId) {
    return db.read(
        h -> h.createQuery("SELECT * FROM tls_certificates WHERE org_id = :org ORDER BY id")
            .bind("org", orgId)
            .map(CERTIFICATE)
            .list());
  }

  List<StoredCertificate> allCertificates() {
    return db.read(h -> h.createQuery("SELECT * FROM tls_certificates ORDER BY id")
        .map(CERTIFICATE)
        .list());
  }

  static void insertCertificate(Handle h, StoredCertificate c) {
    h.createUpdate("""
            INSERT INTO tls_certificates (id, org_id, subject, names, not_before, not_after,
              fingerprint, key_type, chain_pem, sealed_key, created_at)
            VALUES (:id, :org, :subject, :names, :nb, :na, :fp, :kt, :chain, :key, :created)""")
        .bind("id", c.id())
        .bind("org", c.orgId())
        .bind("subject", c.subject())
        .bind("names", String.join(",", c.names()))
        .bind("nb", c.notBefore().toEpochMilli())
        .bind("na", c.notAfter().toEpochMilli())
        .bind("fp", c.fingerprint())
        .bind("kt", c.keyType())
        .bind("chain", c.chainPem())
        .bind("key", c.sealedKey())
        .bind("created", c.createdAt().toEpochMilli())
        .execute();
  }

  static boolean deleteCertificate(Handle h, String orgId, String id) {
    return h.createUpdate("DELETE FROM tls_certificates WHERE org_id = :org AND id = :id")
            .bind("org", orgId)
            .bind("id", id)
            .execute()
        > 0;
  }

  // --- peerings and private endpoints -----------------------------------------------------------

  List<NetworkLink> links(String orgId, NetworkLink.Kind kind) {
    return db.read(h -> links(h, orgId, kind));
  }

  static List<NetworkLink> links(Handle h, String orgId, NetworkLink.Kind kind) {
    return h.createQuery(
            "SELECT * FROM network_links WHERE org_id = :org AND kind = :kind ORDER BY id")
        .bind("org", orgId)
        .bind("kind", kind.name())
        .map(LINK)
        .list();
  }

  List<NetworkLink> allLinks(String status) {
    return db.read(h -> h.createQuery(
            "SELECT * FROM network_links WHERE (:status = '' OR state = :status) ORDER BY id")
        .bind("status", status == null ? "" : status)
        .map(LINK)
        .list());
  }

  /** Every organization's accepted peerings (their ranges pass the allowlist). */
  List<NetworkLink> activePeerings() {
    return db.read(h -> h.createQuery(
            "SELECT * FROM network_links WHERE kind = 'VPC_PEERING' AND state = 'active'")
        .map(LINK)
        .list());
  }

  static Optional<NetworkLink> link(Handle h, String id) {
    return h.createQuery("SELECT * FROM network_links WHERE id = :id")
        .bind("id", id)
        .map(LINK)
        .findOne();
  }

  static void insertLink(Handle h, NetworkLink link) {
    h.createUpdate("""
            INSERT INTO network_links (id, org_id, kind, provider, request, state, instructions,
              failure_reason, created_at, updated_at)
            VALUES (:id, :org, :kind, :provider, :request, :state, :instructions, :reason,
              :created, :updated)""")
        .bind("id", link.id())
        .bind("org", link.orgId())
        .bind("kind", link.kind().name())
        .bind("provider", link.provider())
        .bind("request", Json.write(link.request()))
        .bind("state", link.state().wireName())
        .bind("instructions", Json.write(link.instructions()))
        .bind("reason", link.failureReason())
        .bind("created", link.createdAt().toEpochMilli())
        .bind("updated", link.updatedAt().toEpochMilli())
        .execute();
  }

  static void updateLink(Handle h, NetworkLink link) {
    h.createUpdate("""
            UPDATE network_links SET state = :state, instructions = :instructions,
              failure_reason = :reason, updated_at = :updated
            WHERE id = :id""")
        .bind("id", link.id())
        .bind("state", link.state().wireName())
        .bind("instructions", Json.write(link.instructions()))
        .bind("reason", link.failureReason())
        .bind("updated", link.updatedAt().toEpochMilli())
        .execute();
  }

  static void deleteLink(Handle h, String id) {
    h.createUpdate("DELETE FROM network_links WHERE id = :id").bind("id", id).execute();
  }
}
