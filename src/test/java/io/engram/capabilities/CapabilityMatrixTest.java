package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.organizations.Plan;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The tier matrix (every plan at its capability limit and one over; unlimited plans take
 * everything available; every capability against every tier) and the scope/type matrix (every
 * capability on both assistant types).
 */
class CapabilityMatrixTest {
  static TestServer server;
  static List<JsonNode> registry;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    Assistants reader = Assistants.withKey(
        server, server.apiKey(server.createOrganization("dedicated"), 1000, "admin"));
    registry = new ArrayList<>();
    reader.registry("").get("capabilities").forEach(registry::add);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** An organization on the plan, an admin key, and one assistant of each type (the personal one owned by a member). */
  record Org(Plan plan, Assistants calls, String shared, String personal) {
    static Org on(Plan plan) {
      // Each plan's checks run in their own rate-limit window: Free allows 30 requests a minute.
      server.clock.advance(Duration.ofMinutes(1));
      String org = server.createOrganization(plan.id());
      Assistants calls = Assistants.withKey(server, server.apiKey(org, 1000, "admin"));
      String owner = server
          .createUser(org, "m@" + plan.id() + ".example", "member", "long enough password")
          .get("id")
          .asText();
      return new Org(
          plan,
          calls,
          calls.created("Shared", "org_shared", null),
          calls.created("Personal", "employee_personal", owner));
    }

    String assistantFor(JsonNode capability) {
      return capability.get("scope").asText().equals("organization") ? shared : personal;
    }
  }

  @ParameterizedTest
  @EnumSource(Plan.class)
  void eachPlanTakesItsLimitAndRefusesOneMore(Plan plan) {
    Org org = Org.on(plan);
    List<JsonNode> available = new ArrayList<>();
    org.calls.available(org.personal).json().get("capabilities").forEach(available::add);
    if (plan.limits().capabilityCount().isUnlimited()) {
      Http.Response all = org.calls.patch(org.personal, Assistants.validBody(available));
      assertThat(all.status()).as(all.text()).isEqualTo(200);
      assertThat(all.json().at("/assistant/capabilities").size())
          .isEqualTo(available.size())
          .isGreaterThan(7);
      return;
    }
    int limit = (int) plan.limits().capabilityCount().value();
    assertThat(available.size()).as("enough capabilities to go one over").isGreaterThan(limit);
    Http.Response atLimit =
        org.calls.patch(org.personal, Assistants.validBody(available.subList(0, limit)));
    assertThat(atLimit.status()).as(atLimit.text()).isEqualTo(200);
    Http.Response over =
        org.calls.patch(org.personal, Assistants.validBody(available.subList(0, limit + 1)));
    assertThat(CapabilityValidationTest.errors(over))
        .containsExactly("Organization tier " + plan.tier().id() + " allows maximum " + limit
            + " capabilities, but " + (limit + 1) + " were provided");
  }

  @ParameterizedTest
  @EnumSource(Plan.class)
  void eachCapabilityNeedsItsTier(Plan plan) {
    Org org = Org.on(plan);
    for (JsonNode capability : registry) {
      String id = capability.get("id").asText();
      Http.Response response =
          org.calls.patch(org.assistantFor(capability), Assistants.validBody(List.of(capability)));
      boolean allowed = plan.tier()
          .atLeast(io.engram.organizations.Tier.fromId(
                  capability.get("tierRequirement").asText())
              .orElseThrow());
      if (allowed) {
        assertThat(response.status())
            .as(plan + " " + id + ": " + response.text())
            .isEqualTo(200);
      } else {
        String tier = capability.get("tierRequirement").asText();
        assertThat(CapabilityValidationTest.errors(response))
            .as(plan + " " + id)
            .containsExactly("Capability "
                + capability.get("name").asText() + " (" + id + ") requires "
                + tier.substring(0, 1).toUpperCase(Locale.ROOT) + tier.substring(1)
                + " tier or higher");
      }
    }
  }

  @Test
  void everyCapabilityAgainstBothAssistantTypes() {
    Org org = Org.on(Plan.DEDICATED);
    for (JsonNode capability : registry) {
      String id = capability.get("id").asText();
      String scope = capability.get("scope").asText();
      String label = capability.get("name").asText() + " (" + id + ")";
      Http.Response onShared =
          org.calls.patch(org.shared, Assistants.validBody(List.of(capability)));
      Http.Response onPersonal =
          org.calls.patch(org.personal, Assistants.validBody(List.of(capability)));
      if (scope.equals("user")) {
        assertThat(CapabilityValidationTest.errors(onShared))
            .containsExactly("Capability " + label + " is only available for personal assistants");
      } else {
        assertThat(onShared.status()).as(id + ": " + onShared.text()).isEqualTo(200);
      }
      if (scope.equals("organization")) {
        assertThat(CapabilityValidationTest.errors(onPersonal))
            .containsExactly(
                "Capability " + label + " is only available for organization-level assistants");
      } else {
        assertThat(onPersonal.status()).as(id + ": " + onPersonal.text()).isEqualTo(200);
      }
    }
  }
}
