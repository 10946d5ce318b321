package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * PATCH /api/assistants/{id}/capabilities: the six rules with the spec's templates word for word,
 * the rules the spec leaves open, config validation, and bad bodies (never a 500, nothing stored).
 */
class CapabilityValidationTest {
  static TestServer server;
  static Assistants seed;
  static String owner;
  String shared;
  String personal;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    String org = server.createOrganization("seed");
    seed = Assistants.withKey(server, server.apiKey(org, 100_000, "admin"));
    owner = server
        .createUser(org, "eve@example.com", "member", "long enough password")
        .get("id")
        .asText();
  }

  @BeforeEach
  void freshAssistants() {
    shared = seed.created("Shared", "org_shared", null);
    personal = seed.created("Eve's", "employee_personal", owner);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static final String ORDERS_CONFIG =
      "{\"allowedOrderTypes\":[\"purchase\",\"restock\"],\"maxOrdersPerDay\":25,\"requiresApproval\":true}";

  @Test
  void aSuccessfulPatchReturnsTheSubmittedListAndConfigs() {
    Http.Response response = seed.patch(
        shared,
        "{\"capabilities\":[\"answer_questions\",\"create_orders\","
            + "\"track_orders\"],\"capabilityConfigs\":{\"create_orders\":" + ORDERS_CONFIG + "}}");
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    JsonNode assistant = response.json().get("assistant");
    assertThat(response.json().get("success").asBoolean()).isTrue();
    assertThat(response.json().get("message").asText()).contains("apply to new messages");
    assertThat(assistant.get("_id").asText()).isEqualTo(shared);
    assertThat(assistant.get("name").asText()).isEqualTo("Shared");
    assertThat(assistant.get("type").asText()).isEqualTo("org_shared");
    assertThat(Assistants.ids(assistant.get("capabilities")))
        .containsExactly("answer_questions", "create_orders", "track_orders");
    assertThat(assistant.at("/capabilityConfigs/create_orders").toString())
        .isEqualTo(ORDERS_CONFIG);
    assertThat(assistant.at("/capabilityConfigs/track_orders").toString()).isEqualTo("{}");
    assertThat(response.header("ETag")).isEqualTo("\"2\"");

    JsonNode current = seed.capabilities(shared).json();
    assertThat(current.get("capabilities")).isEqualTo(assistant.get("capabilities"));
    assertThat(current.get("capabilityCount").asInt()).isEqualTo(3);
    assertThat(current.get("capabilityConfigs")).isEqualTo(assistant.get("capabilityConfigs"));
  }

  @Test
  void leavingOutAnswerQuestionsKeepsItEnabledAndCountsIt() {
    Http.Response response = seed.patch(shared, "{\"capabilities\":[\"track_orders\"]}");
    assertThat(Assistants.ids(response.json().at("/assistant/capabilities")))
        .containsExactly("answer_questions", "track_orders");
    // Seven slots on Seed: answer_questions plus six, so six others fit and seven do not.
    List<String> seven = List.of(
        "track_orders",
        "manage_tasks",
        "analyze_documents",
        "summarize_org_updates",
        "search_org_knowledge",
        "generate_quotes",
        "web_research");
    String configs = ",\"capabilityConfigs\":{\"generate_quotes\":{\"currency\":\"EUR\"},"
        + "\"web_research\":{\"maxSourcesPerAnswer\":3}}";
    Http.Response over = seed.patch(shared, "{\"capabilities\":" + json(seven) + configs + "}");
    assertThat(errors(over))
        .containsExactly(
            "Organization tier seed allows maximum 7 capabilities, but 8 were provided");
    Http.Response atLimit = seed.patch(
        shared,
        "{\"capabilities\":" + json(seven.subList(0, 6))
            + ",\"capabilityConfigs\":{\"generate_quotes\":{\"currency\":\"EUR\"}}}");
    assertThat(atLimit.status()).as(atLimit.text()).isEqualTo(200);
  }

  @Test
  void organizationScopedCapabilitiesAreOnlyForOrganizationLevelAssistants() {
    Http.Response response = seed.patch(
        personal, "{\"capabilities\":[\"track_team_decisions\",\"summarize_org_updates\"]}");
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json().get("error").asText()).isEqualTo("Validation failed");
    assertThat(errors(response))
        .contains(
            "Capability Summarize Organization Updates (summarize_org_updates) is only available for organization-level assistants");
    assertThat(capabilityIds(response)).contains("summarize_org_updates");
  }

  @Test
  void userScopedCapabilitiesAreOnlyForPersonalAssistants() {
    Http.Response response = seed.patch(shared, "{\"capabilities\":[\"set_reminders\"]}");
    assertThat(errors(response))
        .containsExactly(
            "Capability Set Reminders (set_reminders) is only available for personal assistants");
    assertThat(seed.patch(personal, "{\"capabilities\":[\"set_reminders\"]}").status())
        .isEqualTo(200);
  }

  @Test
  void capabilitiesScopedToBothFitEitherType() {
    assertThat(seed.patch(shared, "{\"capabilities\":[\"manage_tasks\"]}").status())
        .isEqualTo(200);
    assertThat(seed.patch(personal, "{\"capabilities\":[\"manage_tasks\"]}").status())
        .isEqualTo(200);
  }

  @Test
  void aCapabilityAboveTheOrganizationTierIsRejected() {
    Http.Response response = seed.patch(
        shared,
        "{\"capabilities\":[\"process_refunds\"],\"capabilityConfigs\":"
            + "{\"process_refunds\":{\"maxRefundAmount\":50,\"requiresApproval\":true}}}");
    assertThat(errors(response))
        .containsExactly(
            "Capability Process Refunds (process_refunds) requires Growth tier or higher");
  }

  @Test
  void everyRequiredConfigFieldMustBeSent() {
    Http.Response response = seed.patch(
        shared,
        "{\"capabilities\":[\"create_orders\"],"
            + "\"capabilityConfigs\":{\"create_orders\":{\"maxOrdersPerDay\":3}}}");
    assertThat(errors(response))
        .containsExactly(
            "Capability Create Orders (create_orders) requires config field 'allowedOrderTypes'",
            "Capability Create Orders (create_orders) requires config field 'requiresApproval'");
    Http.Response noConfig = seed.patch(shared, "{\"capabilities\":[\"access_org_analytics\"]}");
    assertThat(errors(noConfig))
        .containsExactly(
            "Capability Access Organization Analytics (access_org_analytics) requires config field 'allowedMetrics'",
            "Capability Access Organization Analytics (access_org_analytics) requires config field 'dataRetention'");
    assertThat(capabilityIds(noConfig)).containsOnly("access_org_analytics");
  }

  @Test
  void everyFailingCapabilityIsReportedInOneResponse() {
    Http.Response response = seed.patch(
        personal,
        "{\"capabilities\":[\"create_orders\",\"forecast_trends\","
            + "\"teleport\",\"set_reminders\",\"set_reminders\"],\"capabilityConfigs\":{\"web_research\":{}}}");
    assertThat(response.status()).isEqualTo(400);
    assertThat(capabilityIds(response))
        .contains("create_orders", "forecast_trends", "teleport", "set_reminders", "web_research");
    assertThat(errors(response))
        .contains(
            "Capability Create Orders (create_orders) is only available for organization-level assistants",
            "Capability Forecast Trends (forecast_trends) requires Boost tier or higher",
            "Unknown capability 'teleport'; GET /api/capabilities/registry lists the valid ids",
            "Capability Set Reminders (set_reminders) is listed more than once",
            "A config was sent for capability Web Research (web_research), which is not in the capabilities list; "
                + "enable it or leave its config out");
    assertUnchanged(personal);
  }

  @Test
  void configValuesAreCheckedAgainstTheirTypesAndBounds() {
    String body =
        "{\"capabilities\":[\"create_orders\",\"generate_quotes\",\"web_research\",\"summarize_org_updates\","
            + "\"access_org_analytics\"],\"capabilityConfigs\":{"
            + "\"create_orders\":{\"allowedOrderTypes\":\"purchase\",\"maxOrdersPerDay\":2.5,\"requiresApproval\":\"yes\","
            + "\"color\":\"red\"},"
            + "\"generate_quotes\":{\"currency\":\"EURO\",\"maxDiscountPercent\":101},"
            + "\"web_research\":{\"maxSourcesPerAnswer\":\"3\",\"allowedDomains\":[]},"
            + "\"summarize_org_updates\":{\"cadence\":\"hourly\"},"
            + "\"access_org_analytics\":{\"allowedMetrics\":[\"revenue\"],\"dataRetention\":731}}}";
    Http.Response response = seed.patch(shared, body);
    assertThat(response.status()).isEqualTo(400);
    assertThat(errors(response))
        .containsExactly(
            "Config field 'allowedOrderTypes' of capability Create Orders (create_orders) must be an array of strings",
            "Config field 'maxOrdersPerDay' of capability Create Orders (create_orders) must be an integer between 1 and 10000",
            "Config field 'requiresApproval' of capability Create Orders (create_orders) must be true or false",
            "Capability Create Orders (create_orders) has no config field 'color'; its fields are allowedOrderTypes, "
                + "maxOrdersPerDay, requiresApproval",
            "Config field 'currency' of capability Generate Quotes (generate_quotes) must be exactly 3 characters long",
            "Config field 'maxDiscountPercent' of capability Generate Quotes (generate_quotes) must be a number between 0 and 100",
            "Config field 'maxSourcesPerAnswer' of capability Web Research (web_research) must be an integer between 1 and 20",
            "Config field 'allowedDomains' of capability Web Research (web_research) must hold 1 to 200 items",
            "Config field 'cadence' of capability Summarize Organization Updates (summarize_org_updates) must be one of "
                + "daily, weekly, monthly",
            "Config field 'allowedMetrics' of capability Access Organization Analytics (access_org_analytics) each item "
                + "must be one of assistants, assistants_by_type, capability_adoption, capability_changes, members, "
                + "members_by_role, api_keys",
            "Config field 'dataRetention' of capability Access Organization Analytics (access_org_analytics) must be an "
                + "integer between 1 and 730");
    for (JsonNode error : response.json().get("validationErrors")) {
      assertThat(error.get("capabilityId").asText()).isNotBlank();
      assertThat(error.get("field").asText()).startsWith("capabilityConfigs.");
    }
    assertUnchanged(shared);
  }

  @Test
  void numbersBeyondDoublePrecisionAreCheckedNotFailed() {
    String body =
        "{\"capabilities\":[\"create_orders\",\"generate_quotes\"],\"capabilityConfigs\":{"
            + "\"create_orders\":{\"allowedOrderTypes\":[\"p\"],\"maxOrdersPerDay\":1e400,\"requiresApproval\":true},"
            + "\"generate_quotes\":{\"currency\":\"EUR\",\"maxDiscountPercent\":-1e400}}}";
    assertThat(errors(seed.patch(shared, body)))
        .containsExactly(
            "Config field 'maxOrdersPerDay' of capability Create Orders (create_orders) must be an integer between 1 and 10000",
            "Config field 'maxDiscountPercent' of capability Generate Quotes (generate_quotes) must be a number between 0 and 100");
    assertUnchanged(shared);
    // An exact decimal is stored and echoed as written.
    Http.Response exact = seed.patch(
        shared,
        "{\"capabilities\":[\"generate_quotes\"],\"capabilityConfigs\":"
            + "{\"generate_quotes\":{\"currency\":\"EUR\",\"maxDiscountPercent\":12.50}}}");
    assertThat(exact.text()).contains("\"maxDiscountPercent\":12.50");
  }

  @Test
  void aCapabilityWithoutConfigTakesOnlyAnEmptyObject() {
    Http.Response keys = seed.patch(
        shared,
        "{\"capabilities\":[\"track_orders\"],\"capabilityConfigs\":"
            + "{\"track_orders\":{\"fast\":true}}}");
    assertThat(errors(keys))
        .containsExactly("Capability Track Orders (track_orders) has no config field 'fast'; "
            + "it takes no config");
    Http.Response notObject = seed.patch(
        shared,
        "{\"capabilities\":[\"track_orders\"],\"capabilityConfigs\":" + "{\"track_orders\":[]}}");
    assertThat(errors(notObject))
        .containsExactly("The config of capability Track Orders (track_orders) must be an object");
    Http.Response empty = seed.patch(
        shared,
        "{\"capabilities\":[\"track_orders\"],\"capabilityConfigs\":" + "{\"track_orders\":{}}}");
    assertThat(empty.status()).isEqualTo(200);
  }

  @Test
  void aPatchWithOnlyOneFieldKeepsTheOther() {
    seed.patch(
        shared,
        "{\"capabilities\":[\"create_orders\"],\"capabilityConfigs\":{\"create_orders\":"
            + ORDERS_CONFIG + "}}");
    // capabilities only: configs of the capabilities that stay are kept.
    Http.Response added =
        seed.patch(shared, "{\"capabilities\":[\"create_orders\",\"track_orders\"]}");
    assertThat(added.status()).as(added.text()).isEqualTo(200);
    assertThat(added.json().at("/assistant/capabilityConfigs/create_orders").toString())
        .isEqualTo(ORDERS_CONFIG);
    // capabilityConfigs only: the list is kept, the configs are replaced.
    String newConfig = ORDERS_CONFIG.replace("25", "40");
    Http.Response reconfigured =
        seed.patch(shared, "{\"capabilityConfigs\":{\"create_orders\":" + newConfig + "}}");
    assertThat(Assistants.ids(reconfigured.json().at("/assistant/capabilities")))
        .containsExactly("answer_questions", "create_orders", "track_orders");
    assertThat(
            reconfigured.json().at("/assistant/capabilityConfigs/create_orders").toString())
        .isEqualTo(newConfig);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{}",
        "{\"capabilities\":null}",
        "{\"capabilityConfigs\":null}",
        "{\"capabilities\":\"track_orders\"}",
        "{\"capabilities\":[1,2]}",
        "{\"capabilities\":[null]}",
        "{\"capabilities\":[\"\"]}",
        "{\"capabilities\":[[\"track_orders\"]]}",
        "{\"capabilities\":{\"track_orders\":true}}",
        "{\"capabilities\":[\"track_orders\"],\"capabilityConfigs\":[]}",
        "{\"capabilities\":[\"track_orders\"],\"capabilityConfigs\":\"{}\"}",
        "{\"capabilities\":[\"track_orders\"],\"enabled\":true}",
        "[\"track_orders\"]",
        "\"track_orders\"",
        "null",
        "{\"capabilities\":[\"track_orders\"]",
        "{\"capabilities\":[\"track_orders\"],\"capabilities\":[]}",
        "not json at all"
      })
  void badBodiesAreRefusedAndChangeNothing(String body) {
    Http.Response response = seed.patch(shared, body);
    assertThat(response.status()).as(response.text()).isEqualTo(400);
    assertThat(response.json().get("success").asBoolean()).isFalse();
    assertThat(response.json().get("error").asText()).isIn("Invalid request", "Validation failed");
    assertUnchanged(shared);
  }

  @Test
  void aTenThousandIdListIsRefusedQuickly() {
    String ids = IntStream.range(0, 10_000)
        .mapToObj(i -> "\"cap_" + i + "\"")
        .collect(Collectors.joining(","));
    Http.Response response = seed.patch(shared, "{\"capabilities\":[" + ids + "]}");
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json().get("message").asText())
        .isEqualTo("'capabilities' may hold at most 200 ids, got 10000");
    assertUnchanged(shared);
  }

  @Test
  void otherContentTypesAreRefused() {
    Http.Response response = seed.send(seed.http
        .patch("/api/assistants/" + shared + "/capabilities")
        .body("text/plain", "{\"capabilities\":[]}"));
    assertThat(response.status()).isEqualTo(415);
    assertThat(response.json().get("success").asBoolean()).isFalse();
    assertUnchanged(shared);
  }

  @Test
  void anUnknownAssistantIsNotFound() {
    Http.Response response = seed.patch("asst_doesnotexist", "{\"capabilities\":[]}");
    assertThat(response.status()).isEqualTo(404);
    assertThat(response.json().get("error").asText()).isEqualTo("Not found");
    assertThat(response.json().get("message").asText())
        .isEqualTo("Assistant asst_doesnotexist not found");
    assertThat(seed.capabilities("asst_doesnotexist").status()).isEqualTo(404);
    assertThat(seed.available("asst_doesnotexist").status()).isEqualTo(404);
  }

  private static void assertUnchanged(String assistantId) {
    JsonNode current = seed.capabilities(assistantId).json();
    assertThat(current.get("version").asLong()).isEqualTo(1);
    assertThat(Assistants.ids(current.get("capabilities"))).containsExactly("answer_questions");
  }

  static List<String> errors(Http.Response response) {
    assertThat(response.status()).as(response.text()).isEqualTo(400);
    List<String> errors = new ArrayList<>();
    response
        .json()
        .get("validationErrors")
        .forEach(error -> errors.add(error.get("error").asText()));
    return errors;
  }

  private static List<String> capabilityIds(Http.Response response) {
    List<String> ids = new ArrayList<>();
    response
        .json()
        .get("validationErrors")
        .forEach(error -> ids.add(error.path("capabilityId").asText()));
    return ids;
  }

  private static String json(List<String> ids) {
    return ids.stream().map(id -> "\"" + id + "\"").collect(Collectors.joining(",", "[", "]"));
  }
}
