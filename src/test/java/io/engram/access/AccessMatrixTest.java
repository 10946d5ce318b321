package io.engram.access;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.http.Responses;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every scope and permission against every credential kind, through probe routes mounted behind
 * the real guards (the memory and inference routes that will use them come later).
 */
class AccessMatrixTest {
  static TestServer server;
  static Http http;
  static String org;

  @BeforeAll
  static void start() {
    server = TestServer.builder()
        .probe(routes -> {
          for (Scope scope : Scope.values()) {
            routes.get("/v1/probe/scope/" + scope.wireName(), Requires.scope(scope), ctx -> {
              Principal p = Access.caller(ctx);
              Responses.json(
                  ctx,
                  Map.of(
                      "org", p.orgId(), "agents", p.agents() == null ? List.of("*") : p.agents()));
            });
          }
          for (Permission permission : Permission.values()) {
            routes.get(
                "/v1/probe/permission/" + permission.wireName(),
                Requires.permission(permission),
                ctx -> {
                  Responses.json(ctx, Map.of("ok", true));
                });
          }
        })
        .start();
    http = server.http;
    org = server.createOrganization("seed");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void aContextTokenReachesExactlyItsScopes() {
    for (Scope granted : Scope.values()) {
      String token = server.token(org, null, granted.wireName());
      for (Scope asked : Scope.values()) {
        Http.Response response =
            http.get("/v1/probe/scope/" + asked.wireName()).bearer(token).send();
        if (asked == granted) {
          assertThat(response.status()).as(granted + " -> " + asked).isEqualTo(200);
        } else {
          assertThat(response.status()).as(granted + " -> " + asked).isEqualTo(403);
          assertThat(response.json().at("/error/type").asText()).isEqualTo("authorization_error");
          assertThat(response.json().at("/error/code").asText()).isEqualTo("insufficient_scope");
        }
      }
    }
  }

  @Test
  void anApiKeyReachesItsPermissionsAndAdminReachesAll() {
    for (Permission granted : Permission.values()) {
      String key = server.apiKey(org, 1000, granted.wireName());
      for (Permission asked : Permission.values()) {
        int status = http.get("/v1/probe/permission/" + asked.wireName())
            .bearer(key)
            .send()
            .status();
        boolean allowed = asked == granted || granted == Permission.ADMIN;
        assertThat(status).as(granted + " -> " + asked).isEqualTo(allowed ? 200 : 403);
      }
    }
  }

  @Test
  void credentialKindsDoNotStandInForEachOther() {
    String token = server.token(org, null, "inference:chat");
    String key = server.apiKey(org, 1000, "admin");
    assertThat(http.get("/v1/probe/permission/inference").bearer(token).send().status())
        .isEqualTo(403);
    assertThat(http.get("/v1/probe/scope/inference:chat").bearer(key).send().status())
        .isEqualTo(403);
    assertThat(server.asOperator(http.get("/v1/probe/scope/memory:read")).status())
        .isEqualTo(403);
    assertThat(http.post("/v1/organizations")
            .bearer(token)
            .json("{\"name\":\"x\"}")
            .send()
            .status())
        .isEqualTo(403);
    assertThat(http.get("/v1/organizations/" + org).bearer(token).send().status())
        .isEqualTo(403);
    String inferenceKey = server.apiKey(org, 1000, "inference");
    Http.Response notAdmin =
        http.get("/v1/organizations/" + org + "/tokens").bearer(inferenceKey).send();
    assertThat(notAdmin.status()).isEqualTo(403);
    assertThat(notAdmin.json().at("/error/code").asText()).isEqualTo("insufficient_permissions");
  }

  @Test
  void agentBindingTravelsWithThePrincipal() {
    String bound = server.token(org, List.of("sales", "support"), "memory:read");
    JsonNode body = http.get("/v1/probe/scope/memory:read").bearer(bound).send().json();
    assertThat(body.get("agents")).extracting(JsonNode::asText).containsExactly("sales", "support");
    assertThat(body.get("org").asText()).isEqualTo(org);
  }

  @Test
  void missingMalformedForgedAndUnknownCredentialsAre401() {
    String realKey = server.apiKey(org, 1000, "admin");
    String forged =
        realKey.substring(0, realKey.length() - 1) + (realKey.endsWith("A") ? "B" : "A");
    String wellFormedUnknown = SecretFormat.generate("engk");
    Map<String, String> cases = Map.of(
        "none", "",
        "not bearer", "Basic dXNlcjpwYXNz",
        "empty bearer", "Bearer ",
        "garbage", "Bearer hello",
        "forged checksum", "Bearer " + forged,
        "unknown key", "Bearer " + wellFormedUnknown);
    cases.forEach((name, header) -> {
      Http.Call call = http.get("/v1/probe/permission/admin");
      if (!header.isEmpty()) {
        call.header("Authorization", header);
      }
      Http.Response response = call.send();
      assertThat(response.status()).as(name).isEqualTo(401);
      assertThat(response.json().at("/error/type").asText())
          .as(name)
          .isEqualTo("authentication_error");
      assertThat(response.json().at("/error/code").asText())
          .as(name)
          .isIn("missing_api_key", "invalid_api_key");
      assertThat(response.header("X-Request-Id")).isNotBlank();
    });
  }

  @Test
  void aRevokedTokenStopsWorkingAtOnce() {
    JsonNode created = server
        .asOperator(http.post("/v1/organizations/" + org + "/tokens")
            .json("{\"name\":\"t\",\"scopes\":[\"memory:read\"]}"))
        .json();
    String secret = created.get("token").asText();
    assertThat(http.get("/v1/probe/scope/memory:read").bearer(secret).send().status())
        .isEqualTo(200);
    server.asOperator(
        http.delete("/v1/organizations/" + org + "/tokens/" + created.get("id").asText()));
    Http.Response refused =
        http.get("/v1/probe/scope/memory:read").bearer(secret).send();
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("revoked_api_key");
  }
}
