package io.engram;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import org.junit.jupiter.api.Test;

/** The service end to end on PostgreSQL (mandatory in CI). */
class PostgresServerTest {

  @Test
  void organizationsCredentialsAndSessionsWorkOnPostgres() {
    try (TestServer server = TestServer.builder().postgres().start()) {
      Http http = server.http;
      assertThat(http.get("/v1/health/ready")
              .send()
              .json()
              .at("/checks/database/kind")
              .asText())
          .isEqualTo("postgresql");
      String org = server.createOrganization("spark");
      String other = server.createOrganization("spark");
      String admin = server.apiKey(org, 1000, "admin");
      JsonNode token = http.post("/v1/organizations/" + org + "/tokens")
          .bearer(admin)
          .json("{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"agents\":[\"a\"]}")
          .send()
          .json();
      assertThat(token.get("token").asText()).startsWith("engc_");
      assertThat(http.get("/v1/organizations/" + other).bearer(admin).send().status())
          .isEqualTo(404);
      assertThat(http.delete(
                  "/v1/organizations/" + org + "/tokens/" + token.get("id").asText())
              .bearer(admin)
              .send()
              .json()
              .get("revoked")
              .asBoolean())
          .isTrue();

      server.createUser(org, "pg@example.com", "member", "a-long-password-1");
      Http.Response login = http.post("/api/auth/login")
          .json("{\"email\":\"pg@example.com\",\"password\":\"a-long-password-1\"}")
          .send();
      assertThat(login.status()).isEqualTo(200);
      int passed = 0;
      for (int i = 0; i < 62; i++) {
        passed += http.get("/api/auth/session").bearer(admin).send().status() == 200 ? 1 : 0;
      }
      assertThat(passed).isEqualTo(60);
    }
  }
}
