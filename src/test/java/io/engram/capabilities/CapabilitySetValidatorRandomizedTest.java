package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.engram.organizations.Limit;
import io.engram.organizations.Tier;
import io.engram.platform.http.ApiException;
import io.engram.platform.http.ValidationError;
import io.engram.platform.json.Json;
import io.engram.support.Seeded;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Random capability sets against the real registry: the validator accepts exactly the sets an
 * independent reading of the rules accepts, and when it refuses, it names every failing capability,
 * in list order.
 */
@ExtendWith(Seeded.class)
class CapabilitySetValidatorRandomizedTest {
  private static final CapabilityRegistry REGISTRY =
      CapabilityRegistry.load(List.of(new OrganizationAnalytics(null)));
  private static final CapabilitySetValidator VALIDATOR = new CapabilitySetValidator(REGISTRY);

  private static JsonNode validValue(ConfigSchemaField field, Random random) {
    return switch (field.fieldType()) {
      case BOOLEAN -> Json.MAPPER.getNodeFactory().booleanNode(random.nextBoolean());
      case INTEGER, NUMBER -> {
        long min = field.minimum() == null ? -1000 : field.minimum().longValue();
        long max = field.maximum() == null ? min + 1000 : field.maximum().longValue();
        yield Json.MAPPER
            .getNodeFactory()
            .numberNode(min + (long) (random.nextDouble() * (max - min)));
      }
      case STRING -> Json.MAPPER.getNodeFactory().textNode(validText(field, random));
      case STRING_ARRAY -> {
        ArrayNode array = Json.MAPPER.createArrayNode();
        int min = field.minItems() == null ? 0 : field.minItems();
        int max = field.maxItems() == null ? min + 5 : field.maxItems();
        for (int i = 0, n = min + random.nextInt(max - min + 1); i < n; i++) {
          array.add(validText(field, random));
        }
        yield array;
      }
    };
  }

  private static String validText(ConfigSchemaField field, Random random) {
    if (field.allowed() != null) {
      return field.allowed().get(random.nextInt(field.allowed().size()));
    }
    int min = field.minLength() == null ? 0 : field.minLength();
    int max = field.maxLength() == null ? min + 20 : Math.min(field.maxLength(), min + 20);
    return "x".repeat(min + random.nextInt(max - min + 1));
  }

  /** A config for the capability: valid, or with one defect the rules name. */
  private static JsonNode config(Capability capability, Random random) {
    if (random.nextInt(12) == 0) {
      return Json.MAPPER.getNodeFactory().textNode("not an object");
    }
    ObjectNode config = Json.MAPPER.createObjectNode();
    capability.config().forEach((name, field) -> {
      if (field.required() ? random.nextInt(10) > 0 : random.nextBoolean()) {
        config.set(
            name,
            random.nextInt(12) == 0
                ? Json.MAPPER.getNodeFactory().textNode("wrong")
                : validValue(field, random));
      }
    });
    if (random.nextInt(12) == 0) {
      config.put("no_such_field", 1);
    }
    return config;
  }

  /** The capabilities the rules say fail, in list order (null stands for the organization-wide limit). */
  private static Set<String> failing(
      List<String> ids, Map<String, JsonNode> configs, AssistantType type, Tier tier, Limit limit) {
    Set<String> failing = new LinkedHashSet<>();
    Set<String> seen = new HashSet<>();
    for (String id : ids) {
      Capability capability = REGISTRY.find(id).orElse(null);
      if (!seen.add(id)
          || capability == null
          || !capability.scope().allows(type)
          || !tier.atLeast(capability.tierRequirement())) {
        failing.add(id);
        continue;
      }
      JsonNode config = configs.getOrDefault(id, Json.MAPPER.createObjectNode());
      if (!config.isObject() || capability.configFields().stream().anyMatch(f -> !config.has(f))) {
        failing.add(id);
        continue;
      }
      config.properties().forEach(entry -> {
        ConfigSchemaField field = capability.config().get(entry.getKey());
        if (field == null || field.problem(entry.getValue()).isPresent()) {
          failing.add(id);
        }
      });
    }
    configs.keySet().stream().filter(id -> !seen.contains(id)).forEach(failing::add);
    if (!limit.isUnlimited() && seen.size() > limit.value()) {
      failing.add(null);
    }
    return failing;
  }

  @Test
  void theValidatorAgreesWithTheRulesAndNamesEveryFailure(Random random) {
    List<Capability> all = REGISTRY.all();
    int accepted = 0;
    for (int round = 0; round < 2_000; round++) {
      AssistantType type = AssistantType.values()[random.nextInt(AssistantType.values().length)];
      Tier tier = Tier.values()[random.nextInt(Tier.values().length)];
      Limit limit = random.nextInt(4) == 0 ? Limit.UNLIMITED : Limit.of(random.nextInt(12));
      List<String> ids = new ArrayList<>();
      Map<String, JsonNode> configs = new LinkedHashMap<>();
      for (int i = 0, n = random.nextInt(9); i < n; i++) {
        String id = random.nextInt(25) == 0
            ? "no_such_capability"
            : all.get(random.nextInt(all.size())).id();
        ids.add(random.nextInt(20) == 0 && !ids.isEmpty() ? ids.getFirst() : id);
        REGISTRY
            .find(id)
            .filter(c -> !c.config().isEmpty() && random.nextInt(4) > 0)
            .ifPresent(c -> configs.put(id, config(c, random)));
      }
      if (random.nextInt(25) == 0) {
        configs.put(all.get(random.nextInt(all.size())).id(), Json.MAPPER.createObjectNode());
      }
      Set<String> expected = failing(ids, configs, type, tier, limit);
      CapabilitySetValidator.Proposal proposal = new CapabilitySetValidator.Proposal(ids, configs);
      if (expected.isEmpty()) {
        CapabilitySet set = VALIDATOR.validate(proposal, type, tier, limit);
        assertThat(set.capabilities()).isEqualTo(ids);
        accepted++;
        continue;
      }
      ApiException refused = catchThrowableOfType(
          ApiException.class, () -> VALIDATOR.validate(proposal, type, tier, limit));
      assertThat(refused).as("%s %s %s %s %s", ids, configs, type, tier, limit).isNotNull();
      List<String> named = new ArrayList<>();
      for (ValidationError error : refused.validationErrors()) {
        if (!named.contains(error.capabilityId())) {
          named.add(error.capabilityId());
        }
        assertThat(error.error()).isNotBlank();
      }
      assertThat(named)
          .as("%s %s %s %s %s", ids, configs, type, tier, limit)
          .containsExactlyElementsOf(expected);
    }
    assertThat(accepted).as("the generator makes valid sets too").isGreaterThan(100);
  }
}
