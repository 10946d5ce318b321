package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.settings.Cidr;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The network records as the routes show them (snake_case, times in epoch seconds). */
final class NetworkViews {
  private NetworkViews() {}

  static Map<String, Object> domain(CustomDomain d) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", d.id());
    view.put("object", "network.domain");
    view.put("domain", d.domain());
    view.put("status", d.state().wireName());
    view.put(
        "verification", Map.of("type", "TXT", "name", d.recordName(), "value", d.recordValue()));
    view.put("created_at", d.createdAt().getEpochSecond());
    view.put("verified_at", seconds(d.verifiedAt()));
    view.put("last_checked_at", seconds(d.lastCheckedAt()));
    view.put("next_check_at", d.state() == DomainState.FAILED ? null : seconds(d.nextCheckAt()));
    view.put("failure_reason", d.failureReason());
    return view;
  }

  static Map<String, Object> certificate(StoredCertificate c, Instant now) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", c.id());
    view.put("object", "network.certificate");
    view.put("subject", c.subject());
    view.put("names", c.names());
    view.put("key_type", c.keyType());
    view.put("fingerprint_sha256", c.fingerprint());
    view.put("not_before", c.notBefore().getEpochSecond());
    view.put("not_after", c.notAfter().getEpochSecond());
    view.put("expires_in_days", Duration.between(now, c.notAfter()).toDays());
    view.put("created_at", c.createdAt().getEpochSecond());
    return view;
  }

  static Map<String, Object> allowlist(List<Cidr> ranges, Map<String, String> notes) {
    List<Map<String, Object>> entries = ranges.stream()
        .map(range -> {
          Map<String, Object> entry = new LinkedHashMap<>();
          entry.put("cidr", range.toString());
          entry.put("description", notes.get(range.toString()));
          return entry;
        })
        .toList();
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "network.allowlist");
    view.put("ip_ranges", entries);
    view.put("allows_all", entries.isEmpty());
    return view;
  }

  static Map<String, Object> firewall(FirewallRules rules) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "network.firewall");
    view.put("outbound_rules", rules.toView());
    view.put("default_action", "allow");
    return view;
  }

  static Map<String, Object> link(NetworkLink link) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("id", link.id());
    view.put("object", link.kind().object);
    view.put("provider", link.provider());
    link.request()
        .fields()
        .forEachRemaining(field -> view.put(field.getKey(), plain(field.getValue())));
    view.put("status", link.state().wireName());
    view.put("instructions", link.instructions());
    view.put("failure_reason", link.failureReason());
    view.put("created_at", link.createdAt().getEpochSecond());
    view.put("updated_at", link.updatedAt().getEpochSecond());
    return view;
  }

  static Map<String, Object> list(List<?> data) {
    Map<String, Object> view = new LinkedHashMap<>();
    view.put("object", "list");
    view.put("data", data);
    return view;
  }

  private static Object plain(JsonNode value) {
    return Json.MAPPER.convertValue(value, Object.class);
  }

  private static Long seconds(Instant at) {
    return at == null ? null : at.getEpochSecond();
  }
}
