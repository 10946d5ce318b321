package io.engram.instances;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Path permissions of signed-in users on the file API: members reach nothing until a rule lets
 * them, folder rules cover what is under them, the most specific rule wins, owners and admins
 * need no rule, listings show only what may be read, and rules name real users.
 */
class StoragePermissionsTest {
  private static TestServer server;

  @BeforeAll
  static void start() {
    server = TestServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static Http.Response rule(String nano, String json) {
    return server.asOperator(
        server.http.post("/v1/nano/" + nano + "/storage/permissions").json(json));
  }

  private static int status(TestServer.Session who, Http.Call call) {
    return who.on(call).send().status();
  }

  @Test
  void membersReachWhatTheirRulesAllowAndNoMore() {
    String org = server.createOrganization("seed");
    String nano = server
        .asOperator(server.http.get("/v1/organizations/" + org + "/instances"))
        .json()
        .at("/data/0/id")
        .asText();
    String files = "/v1/nano/" + nano + "/storage/files/";
    for (String path :
        List.of("data/reports/q3.csv", "data/reports/secret.csv", "data/other.csv")) {
      assertThat(server
              .asOperator(server.http.method("PUT", files + path).body("text/csv", "a,b"))
              .status())
          .isEqualTo(201);
    }
    TestServer.Session member = server.signedIn(org, "mia@example.com", "member");
    TestServer.Session owner = server.signedIn(org, "olga@example.com", "owner");

    // No rule: a member reaches nothing, an owner everything.
    assertThat(status(member, server.http.get(files + "data/reports/q3.csv"))).isEqualTo(403);
    assertThat(status(owner, server.http.get(files + "data/reports/q3.csv"))).isEqualTo(200);
    assertThat(member
            .on(server.http.get("/v1/nano/" + nano + "/storage/files"))
            .send()
            .json()
            .get("data"))
        .isEmpty();

    assertThat(rule(
                nano,
                "{\"path\":\"data/reports/\",\"permissions\":\"read-only\","
                    + "\"users\":[\"Mia@example.com\"]}")
            .status())
        .isEqualTo(200);
    assertThat(rule(
                nano,
                "{\"path\":\"data/reports/secret.csv\",\"permissions\":\"none\","
                    + "\"users\":[\"mia@example.com\"]}")
            .status())
        .isEqualTo(200);
    assertThat(rule(
                nano,
                "{\"path\":\"results/\",\"permissions\":\"read-write\","
                    + "\"users\":[\"mia@example.com\"]}")
            .status())
        .isEqualTo(200);

    assertThat(status(member, server.http.get(files + "data/reports/q3.csv"))).isEqualTo(200);
    assertThat(status(
            member, server.http.method("PUT", files + "data/reports/q3.csv").body("text/csv", "x")))
        .isEqualTo(403);
    assertThat(status(member, server.http.get(files + "data/reports/secret.csv")))
        .isEqualTo(403);
    assertThat(status(member, server.http.get(files + "data/other.csv"))).isEqualTo(403);
    assertThat(status(
            member,
            server
                .http
                .method("PUT", files + "results/mine.json")
                .body("application/octet-stream", "{}")))
        .isEqualTo(201);
    assertThat(status(member, server.http.delete(files + "results/mine.json"))).isEqualTo(204);
    List<String> listed = new ArrayList<>();
    member
        .on(server.http.get("/v1/nano/" + nano + "/storage/files"))
        .send()
        .json()
        .get("data")
        .forEach(file -> listed.add(file.get("path").asText()));
    assertThat(listed).containsExactly("data/reports/q3.csv");
    // A session writes only with its CSRF token.
    assertThat(server
            .http
            .method("PUT", files + "results/x.json")
            .header("Cookie", "engram_session=" + member.cookie())
            .body("application/octet-stream", "{}")
            .send()
            .status())
        .isEqualTo(403);
    // Members do not manage the instance.
    assertThat(status(member, server.http.get("/v1/nano/" + nano + "/env"))).isIn(401, 403);

    assertThat(server
            .asOperator(server.http.get("/v1/nano/" + nano + "/storage/permissions"))
            .json()
            .get("data"))
        .hasSize(3);
    Http.Response unknown = rule(
        nano,
        "{\"path\":\"data/\",\"permissions\":\"read-only\","
            + "\"users\":[\"mia@example.com\",\"nobody@example.com\"]}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.json().at("/error/param").asText()).isEqualTo("users[1]");
    assertThat(rule(
                nano,
                "{\"path\":\"data/\",\"permissions\":\"write-only\","
                    + "\"users\":[\"mia@example.com\"]}")
            .status())
        .isEqualTo(400);
    assertThat(rule(
                nano,
                "{\"path\":\"../x\",\"permissions\":\"none\"," + "\"users\":[\"mia@example.com\"]}")
            .status())
        .isEqualTo(400);

    // Another organization's signed-in user: the instance does not exist for it.
    String other = server.createOrganization("seed");
    TestServer.Session stranger = server.signedIn(other, "sam@example.com", "owner");
    assertThat(status(stranger, server.http.get(files + "data/reports/q3.csv"))).isEqualTo(404);
  }
}
