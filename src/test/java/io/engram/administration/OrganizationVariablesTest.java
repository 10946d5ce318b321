package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** /env: an organization's variables in their layers, checked, live, masked, audited, isolated. */
class OrganizationVariablesTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    // The instance layer: what the operator set in the server's environment.
    server = TestServer.builder().env("MAX_CONCURRENT_REQUESTS", "15").start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response set(String org, String credential, String json) {
    return server
        .http
        .post("/v1/organizations/" + org + "/env")
        .bearer(credential)
        .json(json)
        .send();
  }

  private static Http.Response override(String org, String json) {
    return server.asOperator(
        server.http.post("/v1/organizations/" + org + "/env/overrides").json(json));
  }

  private static JsonNode variable(Http.Response list, String name) {
    for (JsonNode variable : list.json().get("data")) {
      if (variable.get("name").asText().equals(name)) {
        return variable;
      }
    }
    throw new AssertionError(name + " not listed in " + list.text());
  }

  private static JsonNode variable(String org, String name) {
    return variable(server.asOperator(server.http.get("/v1/organizations/" + org + "/env")), name);
  }

  @Test
  void everySpecVariableIsListedWithItsLayerAndWhetherItIsLive() {
    String org = server.createOrganization("seed");
    Http.Response list = server.asOperator(server.http.get("/v1/organizations/" + org + "/env"));
    assertThat(list.status()).as(list.text()).isEqualTo(200);
    JsonNode rate = variable(list, "RATE_LIMIT_REQUESTS");
    assertThat(rate.get("value").asText()).isEqualTo("100");
    assertThat(rate.get("source").asText()).isEqualTo("system");
    assertThat(rate.get("settable").asBoolean()).isTrue();
    assertThat(rate.get("live").asBoolean()).isTrue();
    JsonNode port = variable(list, "API_PORT");
    assertThat(port.get("restart_required").asBoolean()).isTrue();
    assertThat(port.get("settable").asBoolean()).isFalse();
    assertThat(variable(list, "MAX_CONCURRENT_REQUESTS").get("source").asText())
        .isEqualTo("instance");
    assertThat(list.text()).doesNotContain("ENGRAM_ADMIN_KEY").doesNotContain("DATABASE_URL");
    // Masked by the kind of value, not by the name: a boolean holds no secret.
    JsonNode required = variable(list, "API_KEY_REQUIRED");
    assertThat(required.get("value").asText()).isEqualTo("true");
    assertThat(required.get("secret").asBoolean()).isFalse();
  }

  @Test
  void theFiveLayersOfOneVariableInOrderAndTheEffectFollows() {
    String org = server.createOrganization("seed");
    // plan (20) < organization (10) < instance (15, the environment) < runtime (3)
    assertThat(
            set(org, TestServer.ADMIN_KEY, "{\"variables\":{\"MAX_CONCURRENT_REQUESTS\":\"10\"}}")
                .status())
        .isEqualTo(200);
    JsonNode concurrency = variable(org, "MAX_CONCURRENT_REQUESTS");
    assertThat(concurrency.get("value").asText()).isEqualTo("15");
    assertThat(concurrency.get("source").asText()).isEqualTo("instance");
    JsonNode config = server
        .asOperator(server.http.get("/v1/organizations/" + org + "/config"))
        .json();
    assertThat(config.at("/fields/quotas.max_concurrent_requests/default").asInt())
        .isEqualTo(20);

    Http.Response runtime = override(org, "{\"variables\":{\"MAX_CONCURRENT_REQUESTS\":\"3\"}}");
    assertThat(runtime.status()).as(runtime.text()).isEqualTo(200);
    assertThat(variable(runtime, "MAX_CONCURRENT_REQUESTS").get("source").asText())
        .isEqualTo("runtime");
    config = server
        .asOperator(server.http.get("/v1/organizations/" + org + "/config"))
        .json();
    assertThat(config.at("/quotas/max_concurrent_requests").asInt()).isEqualTo(3);

    Http.Response removed = server.asOperator(
        server.http.delete("/v1/organizations/" + org + "/env/overrides/MAX_CONCURRENT_REQUESTS"));
    assertThat(variable(removed, "MAX_CONCURRENT_REQUESTS").get("value").asText())
        .isEqualTo("15");
    // The organization's own value is its configuration's quotas.max_concurrent_requests.
    config = server
        .asOperator(server.http.get("/v1/organizations/" + org + "/config"))
        .json();
    assertThat(config.at("/fields/quotas.max_concurrent_requests/source").asText())
        .isEqualTo("instance");
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org + "/audit"))
            .json()
            .get("data")
            .size())
        .isEqualTo(3);
  }

  @Test
  void rateLimitRequestsAppliesToTheOrganizationsCredentialsAtOnce() {
    String org = server.createOrganization("seed");
    String other = server.createOrganization("seed");
    String token = server.token(org, null, "memory:read");
    String otherToken = server.token(other, null, "memory:read");
    String key = server.apiKey(org, 1000, "admin");
    assertThat(set(org, key, "{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"2\"}}").status())
        .isEqualTo(200);
    Http.Response first = server.http.get("/v1/memory/events").bearer(token).send();
    assertThat(first.header("X-RateLimit-Limit")).isEqualTo("2");
    server.http.get("/v1/memory/events").bearer(token).send();
    assertThat(server.http.get("/v1/memory/events").bearer(token).send().status())
        .isEqualTo(429);
    assertThat(server
            .http
            .get("/v1/memory/events")
            .bearer(otherToken)
            .send()
            .header("X-RateLimit-Limit"))
        .isEqualTo("100");
    // A key with its own rate_limit keeps it.
    assertThat(server
            .http
            .get("/v1/organizations/" + org)
            .bearer(key)
            .send()
            .header("X-RateLimit-Limit"))
        .isEqualTo("1000");
  }

  @Test
  void customAndSecretVariablesAreKeptSealedAndShownMasked() {
    String org = server.createOrganization("seed");
    Http.Response set = set(
        org,
        TestServer.ADMIN_KEY,
        "{\"variables\":{\"WAREHOUSE_REGION\":\"eu-west\",\"PARTNER_API_KEY\":\"sk-very-secret\"}}");
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(variable(set, "WAREHOUSE_REGION").get("value").asText()).isEqualTo("eu-west");
    assertThat(variable(set, "PARTNER_API_KEY").get("value").asText()).isEqualTo("********");
    assertThat(variable(set, "PARTNER_API_KEY").get("secret").asBoolean()).isTrue();
    // Stored sealed: the database does not hold the secret in the clear; the audit masks it.
    String stored = server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery(
                "SELECT value FROM organization_variables WHERE name = 'PARTNER_API_KEY'")
            .mapTo(String.class)
            .one());
    assertThat(stored).startsWith("v1:").doesNotContain("sk-very-secret");
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org + "/audit"))
            .text())
        .doesNotContain("sk-very-secret");
    Http.Response deleted =
        server.asOperator(server.http.delete("/v1/organizations/" + org + "/env/WAREHOUSE_REGION"));
    assertThat(deleted.status()).isEqualTo(200);
    assertThat(deleted.text()).doesNotContain("WAREHOUSE_REGION");
    assertThat(server
            .asOperator(server.http.delete("/v1/organizations/" + org + "/env/WAREHOUSE_REGION"))
            .status())
        .isEqualTo(404);
  }

  @Test
  void badVariablesAreRefusedWholeAndNameTheVariable() {
    String org = server.createOrganization("seed");
    String[][] cases = {
      {"{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"0\"}}", "variables.RATE_LIMIT_REQUESTS"},
      {"{\"variables\":{\"REQUEST_TIMEOUT\":\"5\"}}", "variables.REQUEST_TIMEOUT"},
      {"{\"variables\":{\"LOG_LEVEL\":\"loud\"}}", "variables.LOG_LEVEL"},
      {"{\"variables\":{\"API_PORT\":\"9000\"}}", "variables.API_PORT"},
      {"{\"variables\":{\"ENGRAM_ADMIN_KEY\":\"x\"}}", "variables.ENGRAM_ADMIN_KEY"},
      {"{\"variables\":{\"TRAINING_ENABLED\":\"maybe\"}}", "variables.TRAINING_ENABLED"},
      {"{\"variables\":{\"CHECKPOINT_INTERVAL\":\"0\"}}", "variables.CHECKPOINT_INTERVAL"},
      {"{\"variables\":{\"lower_case\":\"x\"}}", "variables.lower_case"},
      {"{\"variables\":{\"REGION\":7}}", "variables.REGION"},
      {"{\"variables\":{\"MAX_CONCURRENT_REQUESTS\":\"50\"}}", "quotas.max_concurrent_requests"},
      {"{\"variables\":{}}", "variables"},
      {"{\"vars\":{}}", "vars"},
    };
    for (String[] bad : cases) {
      Http.Response refused =
          set(org, TestServer.ADMIN_KEY, bad[0].replace("}}", ",\"FINE\":\"yes\"}}"));
      if (bad[0].equals("{\"variables\":{}}") || bad[0].startsWith("{\"vars\"")) {
        refused = set(org, TestServer.ADMIN_KEY, bad[0]);
      }
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    // Nothing of a refused request was applied, not even its good variable.
    assertThat(server
            .asOperator(server.http.get("/v1/organizations/" + org + "/env"))
            .text())
        .doesNotContain("FINE");
  }

  @Test
  void runtimeOverridesAreTheOperatorsAndVariablesAreIsolated() {
    String org = server.createOrganization("seed");
    String theirs = server.createOrganization("seed");
    String admin = server.apiKey(org, 1000, "admin");
    assertThat(server
            .http
            .post("/v1/organizations/" + org + "/env/overrides")
            .bearer(admin)
            .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"5\"}}")
            .send()
            .status())
        .isEqualTo(403);
    assertThat(server
            .http
            .get("/v1/organizations/" + theirs + "/env")
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(set(theirs, admin, "{\"variables\":{\"REGION\":\"x\"}}").status())
        .isEqualTo(404);
    assertThat(server
            .http
            .delete("/v1/organizations/" + theirs + "/env/REGION")
            .bearer(admin)
            .send()
            .status())
        .isEqualTo(404);
  }

  @Test
  void anOrganizationsLogLevelDecidesWhatItsRequestsLog() {
    String chatty = server.createOrganization("seed");
    String quiet = server.createOrganization("seed");
    String chattyToken = server.token(chatty, null, "memory:read");
    String quietToken = server.token(quiet, null, "memory:read");
    // The organization's own value is outranked by the operator's LOG_LEVEL in the environment
    // (the instance layer: TestServer sets WARNING); the operator's runtime override is not.
    Http.Response own =
        set(chatty, TestServer.ADMIN_KEY, "{\"variables\":{\"LOG_LEVEL\":\"INFO\"}}");
    assertThat(variable(own, "LOG_LEVEL").get("source").asText()).isEqualTo("instance");
    override(chatty, "{\"variables\":{\"LOG_LEVEL\":\"INFO\"}}");
    Logger access = (Logger) LoggerFactory.getLogger("engram.access");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    access.addAppender(lines);
    try {
      server.http.get("/v1/memory/events").bearer(chattyToken).send();
      server.http.get("/v1/memory/events").bearer(quietToken).send();
    } finally {
      access.detachAppender(lines);
    }
    // The server logs at WARN in tests: only the organization at INFO gets its access lines.
    assertThat(lines.list).hasSize(1);
    assertThat(lines.list.getFirst().getFormattedMessage()).contains("/v1/memory/events");
  }
}
