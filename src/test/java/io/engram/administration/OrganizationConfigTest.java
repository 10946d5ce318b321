package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** GET and PATCH /config: values in force and their sources, merge rules, bounds, atomicity, audit. */
class OrganizationConfigTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response get(String orgId, String credential) {
    return server
        .http
        .get("/v1/organizations/" + orgId + "/config")
        .bearer(credential)
        .send();
  }

  private static Http.Response patch(String orgId, String credential, String json) {
    return server
        .http
        .patch("/v1/organizations/" + orgId + "/config")
        .bearer(credential)
        .json(json)
        .send();
  }

  @Test
  void withoutOverridesEveryFieldIsThePlansOrTheSystemsDefault() {
    String org = server.createOrganization("seed");
    Http.Response config = get(org, TestServer.ADMIN_KEY);
    assertThat(config.status()).as(config.text()).isEqualTo(200);
    JsonNode body = config.json();
    assertThat(body.at("/quotas/max_concurrent_requests").asInt()).isEqualTo(20);
    assertThat(body.at("/quotas/max_tokens_per_request").asInt()).isEqualTo(4096);
    assertThat(body.at("/network/max_connections").asInt()).isEqualTo(200);
    assertThat(body.at("/network/allowed_ips").size()).isZero();
    assertThat(body.at("/websocket/enabled").asBoolean()).isTrue();
    assertThat(body.at("/fields/quotas.max_tokens_per_request/source").asText()).isEqualTo("plan");
    assertThat(body.at("/fields/network.keepalive_timeout/source").asText()).isEqualTo("system");
    assertThat(body.at("/fields/network.keepalive_timeout/unit").asText()).isEqualTo("seconds");
    assertThat(body.at("/version").asInt()).isZero();
    assertThat(body.at("/in_use/connections").asInt()).isZero();
  }

  @Test
  void aPatchMergesANullRemovesAnOverrideAndTheSourceFollows() {
    String org = server.createOrganization("seed");
    String admin = server.apiKey(org, 1000, "admin");
    Http.Response first = patch(
        org,
        admin,
        "{\"quotas\":{\"max_tokens_per_request\":1024},\"network\":{\"keepalive_timeout\":5}}");
    assertThat(first.status()).as(first.text()).isEqualTo(200);
    assertThat(first.json().at("/quotas/max_tokens_per_request").asInt()).isEqualTo(1024);
    assertThat(first.json().at("/fields/quotas.max_tokens_per_request/source").asText())
        .isEqualTo("organization");
    assertThat(first.json().at("/fields/quotas.max_tokens_per_request/default").asInt())
        .isEqualTo(4096);

    // A field left out is kept; one given as null goes back to its default.
    Http.Response second = patch(
        org,
        admin,
        "{\"quotas\":{\"max_tokens_per_request\":null},\"websocket\":{\"enabled\":false}}");
    assertThat(second.status()).as(second.text()).isEqualTo(200);
    JsonNode body = second.json();
    assertThat(body.at("/quotas/max_tokens_per_request").asInt()).isEqualTo(4096);
    assertThat(body.at("/fields/quotas.max_tokens_per_request/source").asText()).isEqualTo("plan");
    assertThat(body.at("/network/keepalive_timeout").asInt()).isEqualTo(5);
    assertThat(body.at("/websocket/enabled").asBoolean()).isFalse();
    assertThat(body.at("/version").asInt()).isEqualTo(2);

    // A group set to null drops all of its overrides.
    Http.Response third = patch(org, admin, "{\"network\":null}");
    assertThat(third.json().at("/network/keepalive_timeout").asInt()).isEqualTo(30);
    assertThat(third.json().at("/websocket/enabled").asBoolean()).isFalse();
    assertThat(get(org, admin).json().at("/version").asInt()).isEqualTo(3);
  }

  @Test
  void anOrganizationMayLowerItsPlansCeilingButNotRaiseIt() {
    String org = server.createOrganization("spark");
    Http.Response above =
        patch(org, TestServer.ADMIN_KEY, "{\"quotas\":{\"max_concurrent_requests\":6}}");
    assertThat(above.status()).isEqualTo(400);
    assertThat(above.json().at("/error/param").asText())
        .isEqualTo("quotas.max_concurrent_requests");
    assertThat(above.json().at("/error/message").asText()).contains("from 1 to 5");
    assertThat(patch(org, TestServer.ADMIN_KEY, "{\"quotas\":{\"max_concurrent_requests\":5}}")
            .status())
        .isEqualTo(200);

    // Dedicated is unlimited: no ceiling.
    String dedicated = server.createOrganization("dedicated");
    Http.Response big =
        patch(dedicated, TestServer.ADMIN_KEY, "{\"quotas\":{\"max_concurrent_requests\":50000}}");
    assertThat(big.status()).as(big.text()).isEqualTo(200);
    assertThat(big.json().at("/fields/quotas.max_concurrent_requests/max").isNull())
        .isTrue();
  }

  @Test
  void oneBadFieldRefusesTheWholePatchAndNamesTheField() {
    String org = server.createOrganization("seed");
    assertThat(patch(org, TestServer.ADMIN_KEY, "{\"network\":{\"max_connections\":10}}")
            .status())
        .isEqualTo(200);
    String[][] cases = {
      {
        "{\"network\":{\"max_connections\":5,\"connection_timeout\":0}}",
        "network.connection_timeout"
      },
      {
        "{\"network\":{\"max_connections\":5,\"keepalive_timeout\":\"5\"}}",
        "network.keepalive_timeout"
      },
      {"{\"network\":{\"max_connections\":5.5}}", "network.max_connections"},
      {
        "{\"network\":{\"allowed_ips\":[\"10.0.0.0/8\",\"10.0.0.300/32\"]}}",
        "network.allowed_ips[1]"
      },
      {"{\"network\":{\"allowed_ips\":\"10.0.0.0/8\"}}", "network.allowed_ips"},
      {"{\"network\":{\"allowed_ips\":[\"::1/128\"]}}", "network.allowed_ips[0]"},
      {"{\"websocket\":{\"enabled\":\"yes\"}}", "websocket.enabled"},
      {"{\"websocket\":{\"idle_timeout\":0}}", "websocket.idle_timeout"},
      {"{\"quotas\":{\"tokens\":5}}", "quotas.tokens"},
      {"{\"storage\":{}}", "storage"},
      {"{\"quotas\":7}", "quotas"},
      {
        "{\"quotas\":{\"max_tokens_per_request\":99999999999999999999}}",
        "quotas.max_tokens_per_request"
      },
    };
    for (String[] bad : cases) {
      Http.Response refused = patch(org, TestServer.ADMIN_KEY, bad[0]);
      assertThat(refused.status()).as(bad[0]).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).as(bad[0]).isEqualTo(bad[1]);
    }
    Http.Response allowlist = patch(
        org,
        TestServer.ADMIN_KEY,
        "{\"network\":{\"allowed_ips\":[" + "\"10.0.0.1\",".repeat(100) + "\"10.0.0.2\"]}}");
    assertThat(allowlist.status()).isEqualTo(400);
    assertThat(allowlist.json().at("/error/message").asText()).contains("at most 100");
    JsonNode after = get(org, TestServer.ADMIN_KEY).json();
    assertThat(after.at("/network/max_connections").asInt()).isEqualTo(10);
    assertThat(after.at("/version").asInt()).isEqualTo(1);
  }

  @Test
  void allowlistEntriesAreStoredInCanonicalForm() {
    String org = server.createOrganization("seed");
    Http.Response set = patch(
        org,
        TestServer.ADMIN_KEY,
        "{\"network\":{\"allowed_ips\":[\"10.1.2.3/16\",\"192.0.2.7\",\"10.1.0.0/16\"]}}");
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(set.json().at("/network/allowed_ips").toString())
        .isEqualTo("[\"10.1.0.0/16\",\"192.0.2.7/32\"]");
  }

  @Test
  void changesAreAuditedWithWhoWhenAndWhat() {
    String org = server.createOrganization("seed");
    String admin = server.apiKey(org, 1000, "admin");
    patch(org, admin, "{\"quotas\":{\"max_tokens_per_request\":2000}}");
    patch(org, admin, "{\"quotas\":{\"max_tokens_per_request\":null}}");
    Http.Response audit =
        server.http.get("/v1/organizations/" + org + "/audit").bearer(admin).send();
    assertThat(audit.status()).as(audit.text()).isEqualTo(200);
    JsonNode entries = audit.json().get("data");
    assertThat(entries).hasSize(2);
    assertThat(entries.get(0).get("action").asText()).isEqualTo("config.update");
    assertThat(entries.get(0).at("/detail/before/quotas/max_tokens_per_request").asInt())
        .isEqualTo(2000);
    assertThat(entries.get(0).at("/detail/after").isEmpty()).isTrue();
    assertThat(entries.get(1).at("/detail/patch/quotas/max_tokens_per_request").asInt())
        .isEqualTo(2000);
    assertThat(entries.get(1).get("credential_id").asText()).startsWith("key_");
    assertThat(entries.get(1).get("request_id").asText()).startsWith("req_");
  }

  @Test
  void anotherOrganizationsConfigurationDoesNotExistForYou() {
    String mine = server.createOrganization("seed");
    String theirs = server.createOrganization("seed");
    String myAdmin = server.apiKey(mine, 1000, "admin");
    String myInference = server.apiKey(mine, 1000, "inference");
    assertThat(get(theirs, myAdmin).status()).isEqualTo(404);
    assertThat(patch(theirs, myAdmin, "{\"quotas\":{\"max_tokens_per_request\":10}}")
            .status())
        .isEqualTo(404);
    assertThat(server
            .http
            .get("/v1/organizations/" + theirs + "/audit")
            .bearer(myAdmin)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(get(mine, myInference).status()).isEqualTo(403);
    assertThat(get("org_doesnotexist", TestServer.ADMIN_KEY).status()).isEqualTo(404);
    assertThat(get(theirs, TestServer.ADMIN_KEY).json().at("/version").asInt()).isZero();
  }
}
