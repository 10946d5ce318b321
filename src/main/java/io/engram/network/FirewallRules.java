package io.engram.network;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An organization's outbound rules, in order: the first rule that matches a connection decides;
 * a connection no rule matches is allowed (an organization that wants only named destinations
 * ends its list with {@code deny 0.0.0.0/0} and {@code deny ::/0}).
 */
public record FirewallRules(List<FirewallRule> rules) {
  static final int MAX_RULES = 100;
  static final FirewallRules NONE = new FirewallRules(List.of());

  /** The verdict on one address: the deciding rule's position (from 1; 0: the default). */
  record Verdict(boolean allowed, int ruleNumber, FirewallRule rule) {}

  Verdict decide(String host, byte[] address, int port) {
    for (int i = 0; i < rules.size(); i++) {
      FirewallRule rule = rules.get(i);
      if (rule.matches(host, address, port)) {
        return new Verdict(rule.allow(), i + 1, rule);
      }
    }
    return new Verdict(true, 0, null);
  }

  /** Parses {@code outbound_rules}; a 400 naming the first bad entry. */
  static FirewallRules parse(JsonNode rules) {
    if (rules == null || !rules.isArray()) {
      throw ApiException.badRequest("outbound_rules", "'outbound_rules' must be an array of rules");
    }
    if (rules.size() > MAX_RULES) {
      throw ApiException.badRequest(
          "outbound_rules", "An organization may have at most " + MAX_RULES + " outbound rules");
    }
    List<FirewallRule> parsed = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      parsed.add(FirewallRule.parse(rules.get(i), i));
    }
    return new FirewallRules(List.copyOf(parsed));
  }

  /** From the stored JSON (written by {@link #toJson}, so it parses). */
  static FirewallRules fromJson(String json) {
    return parse(Json.read(json, JsonNode.class));
  }

  List<Map<String, Object>> toView() {
    return rules.stream().map(FirewallRule::toView).toList();
  }

  String toJson() {
    return Json.write(toView());
  }
}
