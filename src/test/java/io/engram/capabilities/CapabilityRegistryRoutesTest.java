package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** GET /api/capabilities/registry and GET .../available-capabilities, field by field. */
class CapabilityRegistryRoutesTest {
  static TestServer server;
  static Assistants seed;
  static Assistants growth;
  static String growthOrg;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    seed =
        Assistants.withKey(server, server.apiKey(server.createOrganization("seed"), 1000, "admin"));
    growthOrg = server.createOrganization("growth");
    growth = Assistants.withKey(server, server.apiKey(growthOrg, 1000, "admin"));
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void theRegistryListsEveryEntryWithTheSpecsFieldsGroupedByScope() {
    JsonNode registry = seed.registry("");
    JsonNode all = registry.get("capabilities");
    assertThat(registry.get("success").asBoolean()).isTrue();
    assertThat(registry.get("total").asInt()).isEqualTo(all.size()).isBetween(15, 22);
    int grouped = 0;
    for (String scope : List.of("organization", "user", "both")) {
      for (JsonNode entry : registry.at("/grouped/" + scope)) {
        assertThat(entry.get("scope").asText()).isEqualTo(scope);
        grouped++;
      }
    }
    assertThat(grouped).isEqualTo(all.size());
    Set<String> categories = new HashSet<>();
    for (JsonNode entry : all) {
      categories.add(entry.get("category").asText());
      assertThat(entry.has("alwaysEnabled")).isTrue();
      assertThat(entry.get("executable").isBoolean()).isTrue();
      for (String field : List.of("id", "name", "description", "tierRequirement")) {
        assertThat(entry.get(field).asText()).isNotBlank();
      }
      // configFields is present exactly when config is required, and names the required fields.
      assertThat(entry.has("configFields"))
          .isEqualTo(entry.get("requiresConfig").asBoolean());
      entry
          .path("configFields")
          .forEach(field -> assertThat(
                  entry.at("/configSchema/" + field.asText() + "/required").asBoolean())
              .isTrue());
    }
    assertThat(categories)
        .containsExactlyInAnyOrder("org_intelligence", "commerce", "productivity", "intelligence");
  }

  @Test
  void theSpecsNamedCapabilitiesHaveTheirConfigFields() {
    JsonNode answer = seed.entry("answer_questions");
    assertThat(answer.get("alwaysEnabled").asBoolean()).isTrue();
    assertThat(answer.get("requiresConfig").asBoolean()).isFalse();

    JsonNode orders = seed.entry("create_orders");
    assertThat(Assistants.ids(orders.get("configFields")))
        .containsExactly("allowedOrderTypes", "maxOrdersPerDay", "requiresApproval");
    assertThat(orders.at("/configSchema/allowedOrderTypes/type").asText())
        .isEqualTo("string_array");
    assertThat(orders.at("/configSchema/maxOrdersPerDay/type").asText()).isEqualTo("integer");
    assertThat(orders.at("/configSchema/maxOrdersPerDay/minimum").asInt()).isEqualTo(1);
    assertThat(orders.at("/configSchema/requiresApproval/type").asText()).isEqualTo("boolean");

    JsonNode analytics = seed.entry("access_org_analytics");
    assertThat(Assistants.ids(analytics.get("configFields")))
        .containsExactly("allowedMetrics", "dataRetention");
    assertThat(analytics.get("scope").asText()).isEqualTo("organization");
  }

  @Test
  void theRegistryFiltersByAssistantTypeAndCategory() {
    int total = seed.registry("").get("total").asInt();
    JsonNode shared = seed.registry("?assistantType=org_shared");
    JsonNode personal = seed.registry("?assistantType=employee_personal");
    assertThat(shared.at("/grouped/user").size()).isZero();
    assertThat(personal.at("/grouped/organization").size()).isZero();
    assertThat(shared.get("total").asInt()
            + personal.get("total").asInt()
            - personal.at("/grouped/both").size())
        .isEqualTo(total);
    assertThat(seed.registry("?assistantType=organization_wide")).isEqualTo(shared);

    JsonNode commerce = seed.registry("?category=commerce&assistantType=employee_personal");
    assertThat(commerce.get("total").asInt()).isPositive();
    commerce.get("capabilities").forEach(entry -> {
      assertThat(entry.get("category").asText()).isEqualTo("commerce");
      assertThat(entry.get("scope").asText()).isNotEqualTo("organization");
    });
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "?assistantType=robot",
        "?category=marketing",
        "?assistantType=",
        "?category=COMMERCE"
      })
  void unknownFiltersAreRefusedInTheProductShape(String query) {
    Http.Response response = seed.send(seed.http.get("/api/capabilities/registry" + query));
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json().get("success").asBoolean()).isFalse();
    assertThat(response.json().get("message").asText()).contains("must be");
  }

  @Test
  void availableCapabilitiesAreFilteredByTypeAndTierAndGroupedByCategory() {
    String shared = seed.created("Shared", "org_shared", null);
    JsonNode available = seed.available(shared).json();
    assertThat(available.get("success").asBoolean()).isTrue();
    assertThat(available.get("organizationTier").asText()).isEqualTo("seed");
    assertThat(available.get("capabilityLimit").asInt()).isEqualTo(7);
    assertThat(Assistants.ids(available.get("currentCapabilities")))
        .containsExactly("answer_questions");
    Set<String> tiersAllowed = Set.of("free", "spark", "seed");
    List<String> expected = seed.registry("?assistantType=org_shared")
        .get("capabilities")
        .valueStream()
        .filter(entry -> tiersAllowed.contains(entry.get("tierRequirement").asText()))
        .map(entry -> entry.get("id").asText())
        .toList();
    assertThat(Assistants.ids(available.get("capabilities")))
        .containsExactlyElementsOf(expected)
        .contains("create_orders")
        .doesNotContain("process_refunds", "schedule_meetings");
    int grouped = 0;
    for (String category :
        List.of("org_intelligence", "commerce", "productivity", "intelligence")) {
      for (JsonNode entry : available.at("/grouped/" + category)) {
        assertThat(entry.get("category").asText()).isEqualTo(category);
        grouped++;
      }
    }
    assertThat(grouped).isEqualTo(available.get("capabilities").size());
    available
        .get("capabilities")
        .forEach(entry -> assertThat(entry.has("alwaysEnabled")).isFalse());
  }

  @Test
  void theRoutesShareTheOrganizationsPerMinuteBudget() {
    Assistants spark = Assistants.withKey(
        server, server.apiKey(server.createOrganization("spark"), 1000, "admin"));
    String id = spark.created("Budgeted", "org_shared", null);
    int passed = 1;
    Http.Response last = null;
    for (int i = 0; i < 64; i++) {
      last = switch (i % 4) {
        case 0 -> spark.send(spark.http.get("/api/capabilities/registry"));
        case 1 -> spark.capabilities(id);
        case 2 -> spark.available(id);
        default -> spark.patch(id, "{\"capabilities\":[\"track_orders\"]}");
      };
      passed += last.status() == 429 ? 0 : 1;
    }
    assertThat(passed).isEqualTo(60);
    assertThat(last.status()).isEqualTo(429);
    assertThat(last.header("Retry-After")).isNotNull();
    assertThat(last.json().get("success").asBoolean()).isFalse();
    assertThat(last.json().get("retryAfter").asLong()).isPositive();
  }

  @Test
  void unlimitedTiersWriteTheCapabilityLimitAsNull() {
    String owner = server
        .createUser(growthOrg, "pat@example.com", "member", "long enough password")
        .get("id")
        .asText();
    String personal = growth.created("Mine", "employee_personal", owner);
    JsonNode available = growth.available(personal).json();
    assertThat(available.get("organizationTier").asText()).isEqualTo("growth");
    assertThat(available.get("capabilityLimit").isNull()).isTrue();
    available
        .get("capabilities")
        .forEach(entry -> assertThat(entry.get("scope").asText()).isNotEqualTo("organization"));
  }
}
