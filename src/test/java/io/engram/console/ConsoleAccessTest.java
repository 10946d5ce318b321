package io.engram.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.engram.support.ServerTest;
import io.engram.support.TestServer;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a signed-in person may do on the routes the console drives: owners and admins manage the
 * organization (people, tokens, keys, memory), members read; the session is never an inference
 * credential, never reaches another organization, and always needs its CSRF token to change
 * anything.
 */
class ConsoleAccessTest extends ServerTest {
  static String org;
  static TestServer.Session owner;
  static TestServer.Session member;

  @BeforeAll
  static void organization() {
    org = server.createOrganization("growth");
    owner = server.signedIn(org, "owner@access.example", "owner");
    member = server.signedIn(org, "member@access.example", "member");
  }

  @Test
  void ownersManageTheOrganizationsPeopleTokensAndKeys() {
    assertThat(owner.on(http.get("/v1/organizations/" + org + "/users")).send().status())
        .isEqualTo(200);
    var token = owner
        .on(http.post("/v1/organizations/" + org + "/tokens"))
        .json("{\"name\":\"bot\",\"scopes\":[\"memory:read\"]}")
        .send();
    assertThat(token.status()).as(token.text()).isEqualTo(201);
    var key = owner
        .on(http.post("/v1/organizations/" + org + "/api-keys"))
        .json("{\"name\":\"backend\",\"level\":\"write\"}")
        .send();
    assertThat(key.status()).as(key.text()).isEqualTo(201);
    assertThat(key.json().get("permissions").toString())
        .isEqualTo("[\"inference\",\"training\",\"models\"]");
    // The key works as its level says: inference yes, admin no.
    String secret = key.json().get("token").asText();
    assertThat(http.get("/v1/models").bearer(secret).send().status()).isEqualTo(200);
    assertThat(http.get("/v1/organizations/" + org + "/users")
            .bearer(secret)
            .send()
            .status())
        .isEqualTo(403);
  }

  @Test
  void ownersChangeRolesAtOnceButNeverLeaveTheOrganizationWithoutAnOwner() {
    String place = server.createOrganization("growth");
    TestServer.Session boss = server.signedIn(place, "boss@roles.example", "owner");
    TestServer.Session staff = server.signedIn(place, "staff@roles.example", "member");
    String users = "/v1/organizations/" + place + "/users/";
    String staffId = staff.user().get("id").asText();
    String bossId = boss.user().get("id").asText();

    assertThat(
            staff.on(http.get("/v1/organizations/" + place + "/users")).send().status())
        .isEqualTo(403);
    var promoted =
        boss.on(http.patch(users + staffId)).json("{\"role\":\"admin\"}").send();
    assertThat(promoted.status()).as(promoted.text()).isEqualTo(200);
    assertThat(promoted.json().get("role").asText()).isEqualTo("admin");
    // In force on the staff's very next request, in the session they already had.
    assertThat(
            staff.on(http.get("/v1/organizations/" + place + "/users")).send().status())
        .isEqualTo(200);

    var alone =
        boss.on(http.patch(users + bossId)).json("{\"role\":\"member\"}").send();
    assertThat(alone.status()).isEqualTo(409);
    assertThat(alone.json().at("/error/code").asText()).isEqualTo("last_owner");
    assertThat(boss.on(http.patch(users + "user_nope"))
            .json("{\"role\":\"admin\"}")
            .send()
            .status())
        .isEqualTo(404);
    assertThat(boss.on(http.patch(users + staffId))
            .json("{\"role\":\"king\"}")
            .send()
            .status())
        .isEqualTo(400);
    // Another organization's owner cannot reach these people.
    assertThat(owner
            .on(http.patch(users + staffId))
            .json("{\"role\":\"member\"}")
            .send()
            .status())
        .isEqualTo(404);

    // With a second owner, the first may step down.
    boss.on(http.patch(users + staffId)).json("{\"role\":\"owner\"}").send();
    var stepDown =
        boss.on(http.patch(users + bossId)).json("{\"role\":\"admin\"}").send();
    assertThat(stepDown.status()).as(stepDown.text()).isEqualTo(200);
  }

  /**
   * Ownership is an owner's to give: an admin (signed in, or through an admin API key it may
   * create) changes members and admins, but cannot make itself owner nor demote an owner.
   */
  @Test
  void onlyAnOwnerGrantsOrTakesAwayOwnership() {
    String place = server.createOrganization("growth");
    TestServer.Session boss = server.signedIn(place, "boss@owners.example", "owner");
    TestServer.Session deputy = server.signedIn(place, "deputy@owners.example", "admin");
    TestServer.Session staff = server.signedIn(place, "staff@owners.example", "member");
    String users = "/v1/organizations/" + place + "/users/";
    String bossId = boss.user().get("id").asText();
    String deputyId = deputy.user().get("id").asText();
    String staffId = staff.user().get("id").asText();

    var selfPromotion =
        deputy.on(http.patch(users + deputyId)).json("{\"role\":\"owner\"}").send();
    assertThat(selfPromotion.status()).isEqualTo(403);
    assertThat(selfPromotion.json().at("/error/code").asText()).isEqualTo("insufficient_role");
    assertThat(deputy
            .on(http.patch(users + bossId))
            .json("{\"role\":\"member\"}")
            .send()
            .status())
        .isEqualTo(403);
    var key = deputy
        .on(http.post("/v1/organizations/" + place + "/api-keys"))
        .json("{\"name\":\"ops\",\"level\":\"admin\"}")
        .send();
    assertThat(key.status()).as(key.text()).isEqualTo(201);
    assertThat(http.patch(users + deputyId)
            .bearer(key.json().get("token").asText())
            .json("{\"role\":\"owner\"}")
            .send()
            .status())
        .isEqualTo(403);
    // Nothing changed: the boss is still the owner, the deputy still an admin.
    Map<String, String> roles = new HashMap<>();
    boss.on(http.get("/v1/organizations/" + place + "/users"))
        .send()
        .json()
        .get("data")
        .forEach(u -> roles.put(u.get("id").asText(), u.get("role").asText()));
    assertThat(roles).containsEntry(bossId, "owner").containsEntry(deputyId, "admin");
    assertThat(deputy
            .on(http.patch(users + staffId))
            .json("{\"role\":\"admin\"}")
            .send()
            .status())
        .isEqualTo(200);
    var granted =
        boss.on(http.patch(users + deputyId)).json("{\"role\":\"owner\"}").send();
    assertThat(granted.status()).as(granted.text()).isEqualTo(200);
    assertThat(granted.json().get("role").asText()).isEqualTo("owner");
  }

  @Test
  void aKeyLevelIsOneOfThreeAndNeverSentWithPermissions() {
    var both = owner
        .on(http.post("/v1/organizations/" + org + "/api-keys"))
        .json("{\"name\":\"x\",\"level\":\"read\",\"permissions\":[\"admin\"]}")
        .send();
    assertThat(both.status()).isEqualTo(400);
    assertThat(both.json().at("/error/param").asText()).isEqualTo("level");
    var unknown = owner
        .on(http.post("/v1/organizations/" + org + "/api-keys"))
        .json("{\"name\":\"x\",\"level\":\"root\"}")
        .send();
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.json().at("/error/message").asText()).contains("read, write, admin");
    var admin = owner
        .on(http.post("/v1/organizations/" + org + "/api-keys"))
        .json("{\"name\":\"ops\",\"level\":\"admin\"}")
        .send();
    assertThat(admin.json().get("permissions").toString()).isEqualTo("[\"admin\"]");
    // An admin key still may not mint keys (the spec: an account-level key, or the dashboard).
    var minted = http.post("/v1/organizations/" + org + "/api-keys")
        .bearer(admin.json().get("token").asText())
        .json("{\"name\":\"y\",\"level\":\"read\"}")
        .send();
    assertThat(minted.status()).isEqualTo(403);
  }

  @Test
  void membersReadMemoryButManageNothing() {
    assertThat(member.on(http.get("/v1/memory")).send().status()).isEqualTo(200);
    var write =
        member.on(http.post("/v1/memory")).json("{\"text\":\"members cannot\"}").send();
    assertThat(write.status()).isEqualTo(403);
    assertThat(write.json().at("/error/code").asText()).isEqualTo("insufficient_role");
    var users = member.on(http.get("/v1/organizations/" + org + "/users")).send();
    assertThat(users.status()).isEqualTo(403);
    assertThat(users.json().at("/error/code").asText()).isEqualTo("insufficient_role");
    var key = member
        .on(http.post("/v1/organizations/" + org + "/api-keys"))
        .json("{\"name\":\"x\",\"level\":\"read\"}")
        .send();
    assertThat(key.status()).isEqualTo(403);
  }

  @Test
  void ownersSeeTheFineTuningJobsMembersDoNot() {
    assertThat(owner.on(http.get("/v1/fine_tuning/jobs")).send().status()).isEqualTo(200);
    var refused = member.on(http.get("/v1/fine_tuning/jobs")).send();
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.json().at("/error/code").asText()).isEqualTo("insufficient_role");
    // Training rights are not inference rights: the session still cannot run a model.
    assertThat(owner
            .on(http.post("/v1/completions"))
            .json("{\"model\":\"x\",\"prompt\":\"hi\"}")
            .send()
            .status())
        .isEqualTo(401);
  }

  @Test
  void ownersWriteAndControlMemoryWithTheirCsrfToken() {
    var remembered = owner
        .on(http.post("/v1/memory"))
        .json("{\"text\":\"the console remembers\"}")
        .send();
    assertThat(remembered.status()).as(remembered.text()).isEqualTo(201);
    String id = remembered.json().get("id").asText();
    assertThat(owner
            .on(http.post("/v1/memory/" + id + "/suppress"))
            .json("{}")
            .send()
            .status())
        .isEqualTo(200);
    // The cookie without the token is refused: another site cannot make the browser do this.
    var forged = http.post("/v1/memory/" + id + "/restore")
        .header("Cookie", "engram_session=" + owner.cookie())
        .json("{}")
        .send();
    assertThat(forged.status()).isEqualTo(403);
    assertThat(forged.json().at("/error/code").asText()).isEqualTo("csrf_failed");
  }

  @Test
  void aSessionIsNotAnInferenceCredentialAndStaysInItsOrganization() {
    var chat = owner
        .on(http.post("/v1/chat/completions"))
        .json("{\"model\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
        .send();
    assertThat(chat.status()).isEqualTo(401);
    String other = server.createOrganization("growth");
    assertThat(
            owner.on(http.get("/v1/organizations/" + other + "/users")).send().status())
        .isEqualTo(404);
    assertThat(
            owner.on(http.get("/v1/organizations/" + other + "/usage")).send().status())
        .isEqualTo(404);
  }

  @Test
  void aPersonInSeveralOrganizationsChoosesOneAndSwitchesOnlyWhereThePasswordOpened() {
    String first = server.createOrganization("growth");
    String second = server.createOrganization("seed");
    String third = server.createOrganization("seed");
    String password = "the same passphrase everywhere";
    server.createUser(first, "kim@several.example", "owner", password);
    server.createUser(second, "kim@several.example", "member", password);
    server.createUser(third, "kim@several.example", "admin", "another passphrase entirely");
    String login = "{\"email\":\"kim@several.example\",\"password\":\"" + password + "\"";

    var choose = http.post("/api/auth/login").json(login + "}").send();
    assertThat(choose.status()).isEqualTo(400);
    assertThat(choose.json().get("field").asText()).isEqualTo("organizationId");
    assertThat(choose.json().get("organizations").findValuesAsText("id"))
        .containsExactlyInAnyOrder(first, second); // not the third: its password differs

    var signedIn = http.post("/api/auth/login")
        .json(login + ",\"organizationId\":\"" + second + "\"}")
        .send();
    assertThat(signedIn.status()).as(signedIn.text()).isEqualTo(200);
    String cookie = cookie(signedIn);
    String csrf = signedIn.json().get("csrfToken").asText();
    var session = http.get("/api/auth/session")
        .header("Cookie", "engram_session=" + cookie)
        .send();
    assertThat(session.json().get("organizations").findValuesAsText("id"))
        .containsExactly(second, first);
    assertThat(session.json().get("organizations").findValuesAsText("role"))
        .containsExactly("member", "owner");

    var refused = http.post("/api/auth/switch")
        .header("Cookie", "engram_session=" + cookie)
        .header("X-CSRF-Token", csrf)
        .json("{\"organizationId\":\"" + third + "\"}")
        .send();
    assertThat(refused.status()).isEqualTo(404);

    var switched = http.post("/api/auth/switch")
        .header("Cookie", "engram_session=" + cookie)
        .header("X-CSRF-Token", csrf)
        .json("{\"organizationId\":\"" + first + "\"}")
        .send();
    assertThat(switched.status()).as(switched.text()).isEqualTo(200);
    assertThat(switched.json().at("/organization/id").asText()).isEqualTo(first);
    assertThat(switched.json().at("/user/role").asText()).isEqualTo("owner");
    String moved = cookie(switched);
    assertThat(http.get("/v1/organizations/" + first + "/users")
            .header("Cookie", "engram_session=" + moved)
            .send()
            .status())
        .isEqualTo(200);
    // The session it came from is signed out.
    assertThat(http.get("/api/auth/session")
            .header("Cookie", "engram_session=" + cookie)
            .send()
            .status())
        .isEqualTo(401);
  }

  private static String cookie(io.engram.support.Http.Response response) {
    return response.headerValues("Set-Cookie").stream()
        .flatMap(header -> java.net.HttpCookie.parse(header).stream())
        .filter(c -> c.getName().equals("engram_session"))
        .findFirst()
        .orElseThrow()
        .getValue();
  }
}
