package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Instances: the default one, create, rename, make default, delete; the instance layer of
 * variables (pending until restart, then in force for the organization's requests); isolation.
 */
class InstancesTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response op(Http.Call call) {
    return server.asOperator(call);
  }

  /** An admin API key without its own rate_limit: it follows RATE_LIMIT_REQUESTS in force. */
  private static String keyFollowingTheVariable(String org) {
    return op(server
            .http
            .post("/v1/organizations/" + org + "/api-keys")
            .json("{\"name\":\"follows\",\"permissions\":[\"admin\"]}"))
        .json()
        .get("token")
        .asText();
  }

  private static String defaultInstance(String org) {
    return op(server.http.get(instances(org)))
        .json()
        .get("data")
        .get(0)
        .get("id")
        .asText();
  }

  private static String instances(String org) {
    return "/v1/organizations/" + org + "/instances";
  }

  private static JsonNode variable(JsonNode list, String name) {
    for (JsonNode variable : list.get("data")) {
      if (variable.get("name").asText().equals(name)) {
        return variable;
      }
    }
    throw new AssertionError(name + " not in " + list);
  }

  @Test
  void anOrganizationHasADefaultInstanceAndMoreAreItsToMake() {
    String org = server.createOrganization("seed");
    Http.Response list = op(server.http.get(instances(org)));
    assertThat(list.status()).as(list.text()).isEqualTo(200);
    assertThat(list.json().get("data")).hasSize(1);
    JsonNode first = list.json().get("data").get(0);
    assertThat(first.get("id").asText()).startsWith("nano_");
    assertThat(first.get("default").asBoolean()).isTrue();
    assertThat(first.get("status").asText()).isEqualTo("running");

    Http.Response made = op(server.http.post(instances(org)).json("{\"name\":\"staging\"}"));
    assertThat(made.status()).as(made.text()).isEqualTo(201);
    String staging = made.json().get("id").asText();
    assertThat(made.json().get("default").asBoolean()).isFalse();
    assertThat(
            op(server.http.post(instances(org)).json("{\"name\":\"staging\"}")).status())
        .isEqualTo(409);
    assertThat(op(server.http.post(instances(org)).json("{\"name\":\" \\u200b \"}"))
            .status())
        .isEqualTo(400);
    assertThat(op(server.http.post(instances(org)).json("{\"name\":\"x\",\"size\":3}"))
            .status())
        .isEqualTo(400);

    Http.Response renamed =
        op(server.http.patch(instances(org) + "/" + staging).json("{\"name\":\"preview\"}"));
    assertThat(renamed.json().get("name").asText()).isEqualTo("preview");
    assertThat(op(server.http.get("/v1/nano/" + staging)).json().get("name").asText())
        .isEqualTo("preview");

    // The default cannot go; once another is the default, it can.
    String firstId = first.get("id").asText();
    assertThat(op(server.http.delete(instances(org) + "/" + firstId)).status()).isEqualTo(409);
    assertThat(op(server.http.patch(instances(org) + "/" + staging).json("{\"default\":false}"))
            .status())
        .isEqualTo(400);
    Http.Response swapped =
        op(server.http.patch(instances(org) + "/" + staging).json("{\"default\":true}"));
    assertThat(swapped.json().get("default").asBoolean()).isTrue();
    assertThat(op(server.http.get(instances(org) + "/" + firstId))
            .json()
            .get("default")
            .asBoolean())
        .isFalse();
    assertThat(op(server.http.delete(instances(org) + "/" + firstId)).status()).isEqualTo(204);
    assertThat(op(server.http.get("/v1/nano/" + firstId)).status()).isEqualTo(404);
    assertThat(op(server.http.get(instances(org))).json().get("data")).hasSize(1);
    String audit = op(server.http.get("/v1/organizations/" + org + "/audit")).text();
    assertThat(audit).contains("instance.create", "instance.update", "instance.delete");
  }

  @Test
  void anotherOrganizationsInstanceDoesNotExistForIt() {
    String org = server.createOrganization("seed");
    String other = server.createOrganization("seed");
    String otherAdmin = server.apiKey(other, 1000, "admin");
    String instance = defaultInstance(org);
    for (Http.Call call : new Http.Call[] {
      server.http.get("/v1/nano/" + instance),
      server.http.get("/v1/nano/" + instance + "/env"),
      server.http.post("/v1/nano/" + instance + "/restart"),
      server.http.get("/v1/nano/" + instance + "/storage/files"),
      server.http.get("/v1/nano/" + instance + "/storage/files/data/a.txt"),
      server.http.get("/v1/nano/" + instance + "/storage/logs"),
      server.http.get(instances(org) + "/" + instance),
    }) {
      Http.Response refused = call.bearer(otherAdmin).send();
      assertThat(refused.status()).as(refused.text()).isEqualTo(404);
    }
    // Its own admin key reaches it; a key without admin is refused; no key is a 401.
    String admin = server.apiKey(org, 1000, "admin");
    assertThat(server.http.get("/v1/nano/" + instance).bearer(admin).send().status())
        .isEqualTo(200);
    String inference = server.apiKey(org, 1000, "inference");
    assertThat(server.http.get("/v1/nano/" + instance).bearer(inference).send().status())
        .isEqualTo(403);
    assertThat(server.http.get("/v1/nano/" + instance).send().status()).isEqualTo(401);
    assertThat(server.http.get("/v1/nano/nano_nothing").bearer(admin).send().status())
        .isEqualTo(404);
  }

  @Test
  void instanceVariablesWaitForTheRestartThenRuleTheOrganizationsRequests() {
    String org = server.createOrganization("seed");
    String instance = defaultInstance(org);
    String env = "/v1/nano/" + instance + "/env";
    // organization layer: 50 requests a minute per key
    assertThat(op(server
                .http
                .post("/v1/organizations/" + org + "/env")
                .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"50\"}}"))
            .status())
        .isEqualTo(200);
    Http.Response pending = op(server
        .http
        .post(env)
        .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"2\",\"TEAM\":\"core\","
            + "\"SERVICE_TOKEN\":\"s3cret\"}}"));
    assertThat(pending.status()).as(pending.text()).isEqualTo(200);
    JsonNode rate = variable(pending.json(), "RATE_LIMIT_REQUESTS");
    assertThat(rate.get("value").asText()).isEqualTo("50");
    assertThat(rate.get("source").asText()).isEqualTo("organization");
    assertThat(rate.get("pending").get("value").asText()).isEqualTo("2");
    assertThat(pending.json().get("restart_required").asBoolean()).isTrue();
    assertThat(variable(pending.json(), "SERVICE_TOKEN")
            .get("pending")
            .get("value")
            .asText())
        .isEqualTo("********");
    assertThat(pending.text()).doesNotContain("s3cret");
    assertThat(op(server.http.get(instances(org) + "/" + instance))
            .json()
            .get("restart_required")
            .asBoolean())
        .isTrue();

    // Before the restart, the organization's key may make more than 2 requests a minute.
    String unlimitedKey = keyFollowingTheVariable(org);
    for (int i = 0; i < 3; i++) {
      assertThat(server.http.get(env).bearer(unlimitedKey).send().status()).isEqualTo(200);
    }
    Http.Response restarted = op(server.http.post("/v1/nano/" + instance + "/restart"));
    assertThat(restarted.status()).as(restarted.text()).isEqualTo(200);
    assertThat(restarted.json().get("applied").toString()).contains("RATE_LIMIT_REQUESTS");
    assertThat(restarted.json().get("restart_required").asBoolean()).isFalse();
    assertThat(restarted.json().get("restarted_at").isNull()).isFalse();

    JsonNode organizationView =
        op(server.http.get("/v1/organizations/" + org + "/env")).json();
    assertThat(variable(organizationView, "RATE_LIMIT_REQUESTS").get("value").asText())
        .isEqualTo("2");
    assertThat(variable(organizationView, "RATE_LIMIT_REQUESTS").get("source").asText())
        .isEqualTo("instance");
    assertThat(variable(organizationView, "TEAM").get("source").asText()).isEqualTo("instance");
    // In force: a fresh key that follows the variable gets 2 requests a minute.
    String fresh = keyFollowingTheVariable(org);
    assertThat(server.http.get(env).bearer(fresh).send().status()).isEqualTo(200);
    assertThat(server.http.get(env).bearer(fresh).send().status()).isEqualTo(200);
    Http.Response limited = server.http.get(env).bearer(fresh).send();
    assertThat(limited.status()).as(limited.text()).isEqualTo(429);

    // Runtime override outranks the instance; removing the instance's value waits for a restart.
    op(server
        .http
        .post("/v1/organizations/" + org + "/env/overrides")
        .json("{\"variables\":{\"RATE_LIMIT_REQUESTS\":\"70\"}}"));
    assertThat(variable(op(server.http.get(env)).json(), "RATE_LIMIT_REQUESTS")
            .get("source")
            .asText())
        .isEqualTo("runtime");
    Http.Response removal = op(server.http.delete(env + "/TEAM"));
    assertThat(variable(removal.json(), "TEAM").get("pending").get("removal").asBoolean())
        .isTrue();
    assertThat(op(server.http.delete(env + "/NOT_THERE")).status()).isEqualTo(404);
    op(server.http.post("/v1/nano/" + instance + "/restart"));
    assertThat(op(server.http.get("/v1/organizations/" + org + "/env")).text())
        .doesNotContain("\"TEAM\"");
  }

  @Test
  void instanceVariablesAreCheckedAsTheOrganizationsAre() {
    String org = server.createOrganization("seed");
    String instance = defaultInstance(org);
    String env = "/v1/nano/" + instance + "/env";
    Http.Response bad =
        op(server.http.post(env).json("{\"variables\":{\"REQUEST_TIMEOUT\":\"5\"}}"));
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.json().get("error").get("param").asText())
        .isEqualTo("variables.REQUEST_TIMEOUT");
    assertThat(op(server.http.post(env).json("{\"variables\":{\"API_PORT\":\"9000\"}}"))
            .status())
        .isEqualTo(400);
    // Above what the plan allows (seed: 20 concurrent requests).
    Http.Response above =
        op(server.http.post(env).json("{\"variables\":{\"MAX_CONCURRENT_REQUESTS\":\"500\"}}"));
    assertThat(above.status()).as(above.text()).isEqualTo(400);
    assertThat(op(server.http.post(env).json("{\"variables\":{\"TEAM\":3}}")).status())
        .isEqualTo(400);
    // All or none: nothing of a refused request is pending.
    op(server.http.post(env).json("{\"variables\":{\"TEAM\":\"a\",\"REQUEST_TIMEOUT\":\"1\"}}"));
    assertThat(op(server.http.get(env)).json().get("restart_required").asBoolean())
        .isFalse();
  }
}
