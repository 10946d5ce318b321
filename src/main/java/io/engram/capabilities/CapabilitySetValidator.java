package io.engram.capabilities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.organizations.Limit;
import io.engram.organizations.Tier;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ValidationError;
import io.engram.platform.json.Json;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The spec's six validation rules, plus the ones the spec leaves open (unknown ids, duplicates,
 * unknown config keys, wrong config types, configs for capabilities not in the list). Every
 * failing capability is reported in one response, in list order, each error naming its
 * capability. The three message templates of the spec are reproduced word for word.
 */
public final class CapabilitySetValidator {

  /** A capability set as proposed, not yet known to be valid: ids may repeat or be unknown. */
  public record Proposal(List<String> ids, Map<String, JsonNode> configs) {}

  private final CapabilityRegistry registry;

  public CapabilitySetValidator(CapabilityRegistry registry) {
    this.registry = registry;
  }

  /** The valid set the proposal describes; a 400 listing every problem otherwise. */
  public CapabilitySet validate(
      Proposal proposal, AssistantType type, Tier tier, Limit capabilityLimit) {
    List<ValidationError> errors = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    Map<String, ObjectNode> configs = new LinkedHashMap<>();
    for (String id : proposal.ids()) {
      if (!seen.add(id)) {
        errors.add(error(
            id,
            CapabilityChange.CAPABILITIES,
            "Capability " + label(id) + " is listed more than once"));
        continue;
      }
      Capability capability = registry.find(id).orElse(null);
      if (capability == null) {
        errors.add(error(
            id,
            CapabilityChange.CAPABILITIES,
            "Unknown capability '" + id + "'; GET /api/capabilities/registry lists the valid ids"));
        continue;
      }
      checkScope(capability, type, errors);
      if (!tier.atLeast(capability.tierRequirement())) {
        errors.add(error(
            id,
            "Capability " + capability.label() + " requires "
                + displayName(capability.tierRequirement()) + " tier or higher"));
      }
      JsonNode config = proposal.configs().get(id);
      if (config != null && !(config instanceof ObjectNode)) {
        errors.add(error(
            id,
            CapabilityChange.CONFIGS,
            "The config of capability " + capability.label() + " must be an object"));
        continue;
      }
      ObjectNode object = config == null ? Json.MAPPER.createObjectNode() : (ObjectNode) config;
      checkConfig(capability, object, errors);
      configs.put(id, object);
    }
    for (String configured : proposal.configs().keySet()) {
      if (!seen.contains(configured)) {
        errors.add(error(
            configured,
            CapabilityChange.CONFIGS,
            "A config was sent for capability " + label(configured)
                + ", which is not in the capabilities list; enable it or leave its config out"));
      }
    }
    int provided = seen.size();
    if (!capabilityLimit.isUnlimited() && provided > capabilityLimit.value()) {
      errors.add(new ValidationError(
          null,
          CapabilityChange.CAPABILITIES,
          "Organization tier " + tier.id() + " allows maximum " + capabilityLimit.value()
              + " capabilities, but " + provided + " were provided"));
    }
    if (!errors.isEmpty()) {
      throw ApiException.validation(errors);
    }
    return new CapabilitySet(proposal.ids(), configs);
  }

  private static void checkScope(
      Capability capability, AssistantType type, List<ValidationError> errors) {
    if (capability.scope().allows(type)) {
      return;
    }
    String audience = capability.scope() == CapabilityScope.ORGANIZATION
        ? "organization-level assistants"
        : "personal assistants";
    errors.add(error(
        capability.id(),
        "Capability " + capability.label() + " is only available for " + audience));
  }

  /** Rule 6 (every required field present), then unknown keys and each value's type and bounds. */
  private static void checkConfig(
      Capability capability, ObjectNode config, List<ValidationError> errors) {
    for (String required : capability.configFields()) {
      if (!config.has(required)) {
        errors.add(configError(
            capability,
            required,
            "Capability " + capability.label() + " requires config field '" + required + "'"));
      }
    }
    config.fields().forEachRemaining(entry -> {
      ConfigSchemaField field = capability.config().get(entry.getKey());
      if (field == null) {
        String known = capability.config().isEmpty()
            ? "it takes no config"
            : "its fields are " + String.join(", ", capability.config().keySet());
        errors.add(configError(
            capability,
            entry.getKey(),
            "Capability " + capability.label() + " has no config field '" + entry.getKey() + "'; "
                + known));
        return;
      }
      field
          .problem(entry.getValue())
          .ifPresent(problem -> errors.add(configError(
              capability,
              entry.getKey(),
              "Config field '" + entry.getKey() + "' of capability " + capability.label() + " "
                  + problem)));
    });
  }

  private String label(String id) {
    return registry.find(id).map(Capability::label).orElse("'" + id + "'");
  }

  /** How the third template writes a tier: {@code Seed}. */
  static String displayName(Tier tier) {
    return Character.toUpperCase(tier.id().charAt(0)) + tier.id().substring(1);
  }

  private static ValidationError error(String capabilityId, String message) {
    return error(capabilityId, CapabilityChange.CAPABILITIES, message);
  }

  private static ValidationError error(String capabilityId, String field, String message) {
    return new ValidationError(capabilityId, field, message);
  }

  private static ValidationError configError(Capability capability, String key, String message) {
    return new ValidationError(
        capability.id(), CapabilityChange.CONFIGS + "." + capability.id() + "." + key, message);
  }
}
