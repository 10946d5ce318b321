package io.engram.budgets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.FakeUpstream;
import io.engram.support.Http;
import io.engram.support.PricedOrganization;
import io.engram.support.UpstreamServerTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Budgets in money through real HTTP on one node (SQLite): a request's cost at its model's prices
 * is reserved before it is sent and settled after, so a budget of N requests' worth lets exactly N
 * through, for the organization, one key and one assistant; a failed upstream call costs nothing;
 * the budget renews with its period; 80 % and 100 % raise the alerts; bad input is a 400 naming
 * the field, another organization's budget a 404.
 */
class BudgetsTest extends UpstreamServerTest {
  private static final double REQUEST = PricedOrganization.REQUEST;

  static PricedOrganization organization() {
    return PricedOrganization.create(server, "scale", upstream);
  }

  /** Chats until one is refused; how many passed, and the refusal. */
  private static int passedUntilRefused(
      PricedOrganization org, String credential, String path, List<Http.Response> refusal) {
    int passed = 0;
    for (int i = 0; i < 20; i++) {
      Http.Response answer = org.chat(credential, path);
      if (answer.status() != 200) {
        refusal.add(answer);
        return passed;
      }
      passed++;
    }
    return passed;
  }

  @Test
  void anOrganizationBudgetOfFourRequestsLetsExactlyFourThroughEvenAtOnce() throws Exception {
    PricedOrganization org = organization();
    String budget = org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":"
        + 4 * REQUEST + ",\"currency\":\"USD\"}");
    ExecutorService clients = Executors.newFixedThreadPool(12);
    List<Integer> statuses = new ArrayList<>();
    try {
      List<Future<Http.Response>> answers = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        answers.add(clients.submit(() -> org.chat()));
      }
      for (Future<Http.Response> answer : answers) {
        Http.Response response = answer.get();
        statuses.add(response.status());
        if (response.status() == 429) {
          assertThat(response.json().at("/error/code").asText()).isEqualTo("budget_exceeded");
          assertThat(response.json().at("/error/message").asText())
              .contains(budget, "$0.02", "renews at");
          assertThat(Long.parseLong(response.header("Retry-After"))).isBetween(1L, 86_400L);
        }
      }
    } finally {
      clients.shutdownNow();
    }
    assertThat(Collections.frequency(statuses, 200)).as(statuses.toString()).isEqualTo(4);
    assertThat(Collections.frequency(statuses, 429)).isEqualTo(8);
    JsonNode read = org.get(budget);
    assertThat(read.path("spent").asDouble()).isCloseTo(4 * REQUEST, within(1e-12));
    assertThat(read.path("remaining").asDouble()).isZero();
    assertThat(read.path("currency").asText()).isEqualTo("USD");
    // The usage report shows the budget beside the cost it counted.
    JsonNode usage = server
        .http
        .get("/v1/organizations/" + org.id() + "/usage")
        .bearer(org.admin())
        .send()
        .json();
    assertThat(usage.at("/budgets/0/id").asText()).isEqualTo(budget);
    assertThat(usage.at("/totals/cost_usd").asDouble()).isCloseTo(4 * REQUEST, within(1e-12));
  }

  @Test
  void aKeyBudgetHoldsThatKeyOnlyAndAnAssistantBudgetThatAssistantOnly() {
    PricedOrganization org = organization();
    JsonNode created = server.operator().createApiKey(org.id(), 100_000, "inference");
    String limited = created.path("token").asText();
    String free = org.key();
    org.budget("{\"scope\":\"key\",\"scope_id\":\"" + created.path("id").asText()
        + "\",\"period\":\"month\",\"limit\":" + REQUEST + "}");
    List<Http.Response> refusal = new ArrayList<>();
    assertThat(passedUntilRefused(org, limited, "/v1/chat/completions", refusal))
        .isEqualTo(1);
    assertThat(refusal.getFirst().json().at("/error/code").asText()).isEqualTo("budget_exceeded");
    assertThat(org.chat(free, "/v1/chat/completions").status()).isEqualTo(200);

    Http.Response assistantCreated = server
        .http
        .post("/api/assistants")
        .bearer(org.admin())
        .json("{\"name\":\"Desk\",\"type\":\"org_shared\"}")
        .send();
    assertThat(assistantCreated.status()).as(assistantCreated.text()).isEqualTo(201);
    String assistant = assistantCreated.json().at("/assistant/_id").asText();
    org.budget("{\"scope\":\"assistant\",\"scope_id\":\"" + assistant
        + "\",\"period\":\"day\",\"limit\":" + 2 * REQUEST + "}");
    String asAssistant = "/v1/assistants/" + assistant + "/chat/completions";
    refusal.clear();
    assertThat(passedUntilRefused(org, free, asAssistant, refusal)).isEqualTo(2);
    assertThat(refusal.getFirst().json().at("/error/code").asText()).isEqualTo("budget_exceeded");
    // The same key outside the assistant is not held to the assistant's budget.
    assertThat(org.chat(free, "/v1/chat/completions").status()).isEqualTo(200);
  }

  @Test
  void aFailedUpstreamCallCostsNothingAndTheBudgetRenewsWithItsDay() {
    PricedOrganization org = organization();
    String budget =
        org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":" + REQUEST + "}");
    upstream.script(FakeUpstream.Script.error(503, "{\"error\":{\"message\":\"down\"}}", null));
    assertThat(org.chat().status()).isGreaterThanOrEqualTo(500);
    assertThat(org.get(budget).path("spent").asDouble()).isZero();
    upstream.script(FakeUpstream.Script.NORMAL);
    assertThat(org.chat().status()).isEqualTo(200);
    assertThat(org.chat().status()).isEqualTo(429);
    long resets = org.get(budget).path("resets_at").asLong();
    server.clock.advance(Duration.ofDays(1));
    try {
      JsonNode renewed = org.get(budget);
      assertThat(renewed.path("spent").asDouble()).isZero();
      assertThat(renewed.path("period_start").asLong()).isEqualTo(resets);
      assertThat(org.chat().status()).isEqualTo(200);
    } finally {
      server.clock.advance(Duration.ofDays(-1));
    }
  }

  @Test
  void whatTheScopeSpentEarlierInThePeriodCounts() {
    PricedOrganization org = organization();
    assertThat(org.chat().status()).isEqualTo(200);
    assertThat(org.chat().status()).isEqualTo(200);
    String budget = org.budget(
        "{\"scope\":\"organization\",\"period\":\"month\",\"limit\":" + 3 * REQUEST + "}");
    assertThat(org.get(budget).path("spent").asDouble()).isCloseTo(2 * REQUEST, within(1e-12));
    assertThat(org.chat().status()).isEqualTo(200);
    assertThat(org.chat().status()).isEqualTo(429);
  }

  @Test
  void eightyAndOneHundredPercentRaiseTheBudgetAlertsAndDeletingResolvesThem() {
    PricedOrganization org = organization();
    String budget =
        org.budget("{\"scope\":\"organization\",\"period\":\"day\",\"limit\":" + 5 * REQUEST + "}");
    for (int i = 0; i < 4; i++) {
      assertThat(org.chat().status()).isEqualTo(200);
    }
    BudgetsModule module = server.engram.modules().stream()
        .filter(BudgetsModule.class::isInstance)
        .map(BudgetsModule.class::cast)
        .findFirst()
        .orElseThrow();
    module.alertRound();
    assertThat(firing(org)).containsExactly("budget_nearly_spent");
    assertThat(org.chat().status()).isEqualTo(200);
    module.alertRound();
    assertThat(firing(org)).containsExactly("budget_spent");
    assertThat(server
            .http
            .delete("/v1/organizations/" + org.id() + "/budgets/" + budget)
            .bearer(org.admin())
            .send()
            .status())
        .isEqualTo(204);
    module.alertRound();
    assertThat(firing(org)).isEmpty();
    assertThat(org.chat().status()).isEqualTo(200);
  }

  private static List<String> firing(PricedOrganization org) {
    return server
        .http
        .get("/v1/organizations/" + org.id() + "/alerts?state=firing")
        .bearer(org.admin())
        .send()
        .json()
        .path("data")
        .findValuesAsText("kind");
  }

  @Test
  void badInputIsA400NamingTheFieldAndAnotherOrganizationsBudgetIsNotFound() {
    PricedOrganization org = organization();
    String[][] cases = {
      {"{\"scope\":\"organization\",\"period\":\"day\",\"limit\":-1}", "limit"},
      {"{\"scope\":\"organization\",\"period\":\"day\",\"limit\":\"5\"}", "limit"},
      {"{\"scope\":\"organization\",\"period\":\"day\",\"limit\":1e12}", "limit"},
      {"{\"scope\":\"organization\",\"period\":\"day\"}", "limit"},
      {
        "{\"scope\":\"organization\",\"period\":\"day\",\"limit\":5,\"currency\":\"EUR\"}",
        "currency"
      },
      {"{\"scope\":\"team\",\"period\":\"day\",\"limit\":5}", "scope"},
      {"{\"scope\":\"organization\",\"period\":\"week\",\"limit\":5}", "period"},
      {"{\"scope\":\"key\",\"period\":\"day\",\"limit\":5}", "scope_id"},
      {
        "{\"scope\":\"key\",\"scope_id\":\"engk_nothing\",\"period\":\"day\",\"limit\":5}",
        "scope_id"
      },
      {
        "{\"scope\":\"assistant\",\"scope_id\":\"asst_x\",\"period\":\"day\",\"limit\":5}",
        "scope_id"
      },
      {"{\"scope\":\"organization\",\"scope_id\":\"x\",\"period\":\"day\",\"limit\":5}", "scope_id"
      },
      {"{\"scope\":\"organization\",\"period\":\"day\",\"limit\":5,\"owner\":\"me\"}", "owner"},
    };
    for (String[] bad : cases) {
      Http.Response refused = org.post("/budgets", bad[0]);
      assertThat(refused.status()).as(bad[0] + " " + refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    String budget = org.budget("{\"scope\":\"organization\",\"period\":\"month\",\"limit\":12.5}");
    assertThat(org.get(budget).path("limit").asDouble()).isEqualTo(12.5);
    PricedOrganization other = organization();
    for (String path : List.of(
        "/v1/organizations/" + org.id() + "/budgets/" + budget,
        "/v1/organizations/" + other.id() + "/budgets/" + budget)) {
      assertThat(server.http.get(path).bearer(other.admin()).send().status()).isEqualTo(404);
      assertThat(server.http.delete(path).bearer(other.admin()).send().status()).isEqualTo(404);
    }
    // An inference key may not read or set budgets.
    assertThat(server
            .http
            .get("/v1/organizations/" + org.id() + "/budgets")
            .bearer(org.key())
            .send()
            .status())
        .isEqualTo(403);
    assertThat(org.get(budget).path("id").asText()).isEqualTo(budget);
  }
}
