package io.engram.administration;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.ServerTest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class OrganizationRoutesTest extends ServerTest {

  @Test
  void theOperatorCreatesAndReadsAnOrganization() {
    Http.Response created = server.asOperator(
        http.post("/v1/organizations").json("{\"name\":\"Acme\",\"plan\":\"Seed\"}"));
    assertThat(created.status()).isEqualTo(201);
    JsonNode org = created.json();
    assertThat(org.get("id").asText()).startsWith("org_");
    assertThat(org.get("plan").asText()).isEqualTo("seed");
    assertThat(org.get("tier").asText()).isEqualTo("seed");
    assertThat(org.at("/limits/capability_count").asInt()).isEqualTo(7);
    assertThat(org.at("/limits/requests_per_minute").asInt()).isEqualTo(200);

    Http.Response read =
        server.asOperator(http.get("/v1/organizations/" + org.get("id").asText()));
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.json()).isEqualTo(org);
    assertThat(server
            .asOperator(http.get("/v1/organizations"))
            .json()
            .get("data")
            .findValuesAsText("id"))
        .contains(org.get("id").asText());
  }

  @Test
  void organizationsArePaged() {
    for (int i = 0; i < 3; i++) {
      server.createOrganization("spark");
    }
    JsonNode first = server.asOperator(http.get("/v1/organizations?limit=2")).json();
    assertThat(first.get("data")).hasSize(2);
    assertThat(first.get("has_more").asBoolean()).isTrue();
    String last = first.get("data").get(1).get("id").asText();
    JsonNode rest = server
        .asOperator(http.get("/v1/organizations?limit=1000&after=" + last))
        .json();
    assertThat(rest.get("has_more").asBoolean()).isFalse();
    assertThat(rest.get("data").findValuesAsText("id"))
        .doesNotContain(last)
        .allSatisfy(id -> assertThat(id).isGreaterThan(last));
    assertThat(server.asOperator(http.get("/v1/organizations?limit=0")).status())
        .isEqualTo(400);
    assertThat(server.asOperator(http.get("/v1/organizations?limit=x")).status())
        .isEqualTo(400);
  }

  @Test
  void unlimitedLimitsAreWrittenAsNullAndThePlanDefaultsToFree() {
    JsonNode dedicated = server
        .asOperator(
            http.post("/v1/organizations").json("{\"name\":\"Big\",\"plan\":\"dedicated\"}"))
        .json();
    assertThat(dedicated.at("/limits/concurrent_requests").isNull()).isTrue();
    assertThat(dedicated.at("/limits/tokens_per_request").asInt()).isEqualTo(16384);
    JsonNode free = server
        .asOperator(http.post("/v1/organizations").json("{\"name\":\"Small\"}"))
        .json();
    assertThat(free.get("plan").asText()).isEqualTo("free");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "{}|name|'name' is required",
        "{\"name\":\"\"}|name|'name' must not be empty",
        "{\"name\":42}|name|'name' must be a string",
        "{\"name\":\"A\",\"plan\":\"platinum\"}|plan|Unknown plan 'platinum'",
        "{\"name\":\"A\",\"colour\":\"red\"}|colour|Unknown field 'colour'",
      })
  void badOrganizationInputIs400NamingTheField(String body, String param, String message) {
    Http.Response response = server.asOperator(http.post("/v1/organizations").json(body));
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json().at("/error/type").asText()).isEqualTo("invalid_request_error");
    assertThat(response.json().at("/error/param").asText()).isEqualTo(param);
    assertThat(response.json().at("/error/message").asText()).contains(message);
  }

  @Test
  void usersHaveRolesAndUniqueEmails() {
    String org = server.createOrganization("seed");
    JsonNode owner = server.createUser(org, "Owner@Example.com", "owner", "a-long-password");
    assertThat(owner.get("email").asText()).isEqualTo("owner@example.com");
    assertThat(owner.get("role").asText()).isEqualTo("owner");
    assertThat(owner.has("password")).isFalse();
    Http.Response duplicate = server.asOperator(
        http.post("/v1/organizations/" + org + "/users").json("{\"email\":\"owner@example.com\"}"));
    assertThat(duplicate.status()).isEqualTo(409);
    assertThat(server
            .asOperator(http.post("/v1/organizations/" + org + "/users")
                .json("{\"email\":\"x@example.com\",\"role\":\"king\"}"))
            .status())
        .isEqualTo(400);
    assertThat(server
            .asOperator(http.post("/v1/organizations/" + org + "/users")
                .json("{\"email\":\"not-an-email\"}"))
            .status())
        .isEqualTo(400);
    assertThat(server
            .asOperator(http.post("/v1/organizations/" + org + "/users")
                .json("{\"email\":\"y@example.com\",\"password\":\"short\"}"))
            .status())
        .isEqualTo(400);
    JsonNode list =
        server.asOperator(http.get("/v1/organizations/" + org + "/users")).json();
    assertThat(list.get("data")).hasSize(1);
  }

  @Test
  void aTokenIsShownOnceListedWithoutItsSecretAndRevocable() {
    String org = server.createOrganization("seed");
    Http.Response created = server.asOperator(
        http.post("/v1/organizations/" + org + "/tokens")
            .json(
                "{\"name\":\"assistant\",\"scopes\":[\"memory:read\",\"inference:chat\"],\"agents\":[\"sales\"]}"));
    assertThat(created.status()).isEqualTo(201);
    JsonNode token = created.json();
    String secret = token.get("token").asText();
    assertThat(secret).startsWith("engc_");
    assertThat(token.get("scopes"))
        .extracting(JsonNode::asText)
        .containsExactly("memory:read", "inference:chat");
    assertThat(token.get("agents")).extracting(JsonNode::asText).containsExactly("sales");
    assertThat(token.get("hint").asText())
        .isEqualTo("engc_..." + secret.substring(secret.length() - 4));

    Http.Response list = server.asOperator(http.get("/v1/organizations/" + org + "/tokens"));
    assertThat(list.text()).doesNotContain(secret);
    assertThat(list.json().get("data").get(0).has("token")).isFalse();

    String tokenId = token.get("id").asText();
    Http.Response revoked =
        server.asOperator(http.delete("/v1/organizations/" + org + "/tokens/" + tokenId));
    assertThat(revoked.status()).isEqualTo(200);
    assertThat(revoked.json().get("revoked").asBoolean()).isTrue();
    long revokedAt = revoked.json().get("revoked_at").asLong();
    Http.Response again =
        server.asOperator(http.delete("/v1/organizations/" + org + "/tokens/" + tokenId));
    assertThat(again.json().get("revoked_at").asLong()).isEqualTo(revokedAt);
    assertThat(server
            .asOperator(http.delete("/v1/organizations/" + org + "/tokens/tok_missing"))
            .status())
        .isEqualTo(404);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"name\":\"t\"}|scopes",
        "{\"name\":\"t\",\"scopes\":[]}|scopes",
        "{\"name\":\"t\",\"scopes\":[\"memory:everything\"]}|scopes",
        "{\"name\":\"t\",\"scopes\":\"memory:read\"}|scopes",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"agents\":[]}|agents",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"agents\":[\"Bad Slug\"]}|agents",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":\"yesterday\"}|expires_at",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":1000}|expires_at",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":31556889864403199}|expires_at",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":9223372036854775807}|expires_at",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":1.5e9}|expires_at",
        "{\"name\":\"t\",\"scopes\":[\"memory:read\",7]}|scopes",
        "{\"scopes\":[\"memory:read\"]}|name",
      })
  void badTokenInputIs400AndCreatesNothing(String body, String param) {
    assertRefusedAndNothingCreated("tokens", body, param);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"name\":\"k\",\"permissions\":[\"root\"]}|permissions",
        "{\"name\":\"k\",\"permissions\":[\"inference\"],\"rate_limit\":0}|rate_limit",
        "{\"name\":\"k\",\"permissions\":[\"inference\"],\"rate_limit\":1.5}|rate_limit",
        "{\"name\":\"k\",\"permissions\":[\"inference\"],\"rate_limit\":\"100\"}|rate_limit",
      })
  void badApiKeyInputIs400(String body, String param) {
    assertRefusedAndNothingCreated("api-keys", body, param);
  }

  /** A 400 naming the parameter, and the organization's collection still empty. */
  private static void assertRefusedAndNothingCreated(String collection, String body, String param) {
    String org = server.createOrganization("seed");
    String path = "/v1/organizations/" + org + "/" + collection;
    Http.Response response = server.asOperator(http.post(path).json(body));
    assertThat(response.status()).as(response.text()).isEqualTo(400);
    assertThat(response.json().at("/error/param").asText()).isEqualTo(param);
    assertThat(server.asOperator(http.get(path)).json().get("data")).isEmpty();
  }

  @Test
  void anApiKeyDefaultsToTheConfiguredRateLimitAndIsRevocable() {
    String org = server.createOrganization("seed");
    JsonNode key = server
        .asOperator(http.post("/v1/organizations/" + org + "/api-keys")
            .json("{\"name\":\"ci\",\"permissions\":[\"inference\",\"models\"]}"))
        .json();
    assertThat(key.get("token").asText()).startsWith("engk_");
    assertThat(key.get("rate_limit").isNull()).isTrue(); // RATE_LIMIT_REQUESTS in force
    assertThat(key.get("permissions"))
        .extracting(JsonNode::asText)
        .containsExactly("inference", "models");
    String secret = key.get("token").asText();
    String id = key.get("id").asText();
    assertThat(server
            .asOperator(http.get("/v1/organizations/" + org + "/api-keys"))
            .text())
        .doesNotContain(secret);
    assertThat(server
            .asOperator(http.delete("/v1/organizations/" + org + "/api-keys/" + id))
            .status())
        .isEqualTo(200);
  }

  @Test
  void anAdminApiKeyManagesItsOwnOrganizationOnly() {
    String mine = server.createOrganization("seed");
    String theirs = server.createOrganization("seed");
    String adminKey = server.apiKey(mine, 1000, "admin");
    assertThat(http.get("/v1/organizations/" + mine).bearer(adminKey).send().status())
        .isEqualTo(200);
    Http.Response created = http.post("/v1/organizations/" + mine + "/tokens")
        .bearer(adminKey)
        .json("{\"name\":\"t\",\"scopes\":[\"memory:write\"]}")
        .send();
    assertThat(created.status()).isEqualTo(201);
    assertThat(created.json().get("organization_id").asText()).isEqualTo(mine);
    // API keys are created with an account-level key only (the spec); the admin key lists them.
    Http.Response minted = http.post("/v1/organizations/" + mine + "/api-keys")
        .bearer(adminKey)
        .json("{\"name\":\"k\",\"permissions\":[\"admin\"]}")
        .send();
    assertThat(minted.status()).isEqualTo(403);
    assertThat(minted.json().at("/error/code").asText()).isEqualTo("account_key_required");
    assertThat(http.get("/v1/organizations/" + mine + "/api-keys")
            .bearer(adminKey)
            .send()
            .status())
        .isEqualTo(200);

    for (String path : List.of("", "/users", "/tokens", "/api-keys")) {
      Http.Response response =
          http.get("/v1/organizations/" + theirs + path).bearer(adminKey).send();
      assertThat(response.status()).as(path).isEqualTo(404);
      assertThat(response.json().at("/error/message").asText()).isEqualTo("Organization not found");
    }
    // Another organization's token id, addressed through my organization, does not exist for me.
    String theirTokenId = server
        .asOperator(http.post("/v1/organizations/" + theirs + "/tokens")
            .json("{\"name\":\"t\",\"scopes\":[\"memory:read\"]}"))
        .json()
        .get("id")
        .asText();
    assertThat(http.delete("/v1/organizations/" + mine + "/tokens/" + theirTokenId)
            .bearer(adminKey)
            .send()
            .status())
        .isEqualTo(404);
    assertThat(http.delete("/v1/organizations/" + theirs + "/tokens/" + theirTokenId)
            .bearer(adminKey)
            .send()
            .status())
        .isEqualTo(404);
    // Only the operator creates organizations.
    assertThat(http.post("/v1/organizations")
            .bearer(adminKey)
            .json("{\"name\":\"x\"}")
            .send()
            .status())
        .isEqualTo(403);
  }

  @Test
  void accountKeysCreateOrganizationsAndCanBeRevoked() {
    JsonNode key = server
        .asOperator(http.post("/v1/account/keys").json("{\"name\":\"deploy bot\"}"))
        .json();
    String secret = key.get("token").asText();
    assertThat(secret).startsWith("enga_");
    assertThat(http.post("/v1/organizations")
            .bearer(secret)
            .json("{\"name\":\"Via key\"}")
            .send()
            .status())
        .isEqualTo(201);
    assertThat(server.asOperator(http.get("/v1/account/keys")).text()).doesNotContain(secret);
    server.asOperator(http.delete("/v1/account/keys/" + key.get("id").asText()));
    Http.Response refused =
        http.post("/v1/organizations").bearer(secret).json("{\"name\":\"x\"}").send();
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("revoked_api_key");
  }

  @Test
  void anExpiredCredentialIsRefused() {
    String org = server.createOrganization("seed");
    long in90Seconds = server.clock.instant().getEpochSecond() + 90;
    String key = server
        .asOperator(http.post("/v1/organizations/" + org + "/api-keys")
            .json("{\"name\":\"short\",\"permissions\":[\"admin\"],\"expires_at\":" + in90Seconds
                + "}"))
        .json()
        .get("token")
        .asText();
    assertThat(http.get("/v1/organizations/" + org).bearer(key).send().status()).isEqualTo(200);
    server.clock.advance(Duration.ofSeconds(91));
    Http.Response expired = http.get("/v1/organizations/" + org).bearer(key).send();
    assertThat(expired.status()).isEqualTo(401);
    assertThat(expired.json().at("/error/code").asText()).isEqualTo("expired_api_key");
    assertThat(expired.json().at("/error/type").asText()).isEqualTo("authentication_error");
  }

  @Test
  void anRfc3339ExpiryIsAccepted() {
    String org = server.createOrganization("seed");
    Http.Response created = server.asOperator(
        http.post("/v1/organizations/" + org + "/tokens")
            .json(
                "{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"expires_at\":\"2099-01-01T00:00:00Z\"}"));
    assertThat(created.status()).isEqualTo(201);
    assertThat(created.json().get("expires_at").asLong()).isEqualTo(4070908800L);
  }
}
