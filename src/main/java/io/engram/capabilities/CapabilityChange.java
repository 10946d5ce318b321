package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.JsonBody;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PATCH body, checked for shape: {@code capabilities} (array of ids) and/or
 * {@code capabilityConfigs} (object of objects). At least one is sent; the one left out keeps
 * its current value (docs/capabilities.md). Whether the ids and configs are acceptable is
 * {@link CapabilitySetValidator}'s question, so that every problem is reported together.
 */
public record CapabilityChange(List<String> capabilities, Map<String, JsonNode> configs) {
  static final String CAPABILITIES = "capabilities";
  static final String CONFIGS = "capabilityConfigs";
  /** Far above the registry's size; a longer list is not a capability set but a mistake or an attack. */
  static final int MAX_IDS = 200;

  private static final int MAX_ID_LENGTH = 128;

  public static CapabilityChange parse(JsonBody body) {
    body.allowOnly(Set.of(CAPABILITIES, CONFIGS));
    JsonNode ids = body.rawNotNull(CAPABILITIES);
    JsonNode configs = body.rawNotNull(CONFIGS);
    if (ids == null && configs == null) {
      throw ApiException.badRequest(
          CAPABILITIES,
          "Send 'capabilities' (array of capability ids), "
              + "'capabilityConfigs' (object), or both");
    }
    return new CapabilityChange(
        ids == null ? null : ids(ids), configs == null ? null : configs(configs));
  }

  private static List<String> ids(JsonNode node) {
    if (!node.isArray()) {
      throw ApiException.badRequest(
          CAPABILITIES, "'capabilities' must be an array of capability ids");
    }
    if (node.size() > MAX_IDS) {
      throw ApiException.badRequest(
          CAPABILITIES, "'capabilities' may hold at most " + MAX_IDS + " ids, got " + node.size());
    }
    List<String> ids = new ArrayList<>(node.size());
    for (JsonNode item : node) {
      if (!item.isTextual() || item.asText().isEmpty() || item.asText().length() > MAX_ID_LENGTH) {
        throw ApiException.badRequest(
            CAPABILITIES,
            "'capabilities' must contain only capability ids " + "(non-empty strings of at most "
                + MAX_ID_LENGTH + " characters)");
      }
      ids.add(item.asText());
    }
    return ids;
  }

  private static Map<String, JsonNode> configs(JsonNode node) {
    if (!node.isObject()) {
      throw ApiException.badRequest(
          CONFIGS,
          "'capabilityConfigs' must be an object mapping capability ids " + "to config objects");
    }
    if (node.size() > MAX_IDS) {
      throw ApiException.badRequest(
          CONFIGS, "'capabilityConfigs' may hold at most " + MAX_IDS + " entries");
    }
    Map<String, JsonNode> configs = new LinkedHashMap<>();
    node.fields().forEachRemaining(entry -> configs.put(entry.getKey(), entry.getValue()));
    return configs;
  }

  /**
   * The proposal this change makes to the {@code current} set: the submitted list (or the current
   * one), with the always-enabled capabilities added in front when left out, and the submitted
   * configs (or, when none were sent, the current configs of capabilities that stay).
   */
  CapabilitySetValidator.Proposal applyTo(CapabilitySet current, CapabilityRegistry registry) {
    List<String> submitted = capabilities == null ? current.capabilities() : capabilities;
    List<String> ids = new ArrayList<>();
    registry.alwaysEnabled().stream()
        .map(Capability::id)
        .filter(id -> !submitted.contains(id))
        .forEach(ids::add);
    ids.addAll(submitted);
    Map<String, JsonNode> proposed = new LinkedHashMap<>();
    if (configs != null) {
      proposed.putAll(configs);
    } else {
      ids.stream()
          .filter(current.configs()::containsKey)
          .forEach(id -> proposed.put(id, current.configs().get(id)));
    }
    return new CapabilitySetValidator.Proposal(ids, proposed);
  }
}
