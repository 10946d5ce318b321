package io.engram.capabilities;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Who reaches which assistant: API keys and signed-in sessions, owners, admins and members,
 * personal assistants, and another organization (404, never a hint that the assistant exists).
 */
class AssistantPermissionsTest {
  static TestServer server;
  static Assistants adminKey;
  static Assistants inferenceKey;
  static Assistants owner;
  static Assistants admin;
  static Assistants member;
  static Assistants otherMember;
  static Assistants strangerKey;
  static Assistants strangerOwner;
  static String shared;
  static String membersOwn;
  static String othersOwn;
  static String memberId;
  static String otherMemberId;

  @BeforeAll
  static void start() {
    server = TestServer.start();
    String org = server.createOrganization("rise");
    adminKey = Assistants.withKey(server, server.apiKey(org, 1000, "admin"));
    inferenceKey = Assistants.withKey(server, server.apiKey(org, 1000, "inference", "models"));
    owner = Assistants.as(server, server.signedIn(org, "owner@a.example", "owner"));
    admin = Assistants.as(server, server.signedIn(org, "admin@a.example", "admin"));
    TestServer.Session memberSession = server.signedIn(org, "member@a.example", "member");
    TestServer.Session otherSession = server.signedIn(org, "other@a.example", "member");
    memberId = memberSession.user().get("id").asText();
    otherMemberId = otherSession.user().get("id").asText();
    member = Assistants.as(server, memberSession);
    otherMember = Assistants.as(server, otherSession);
    String strangers = server.createOrganization("rise");
    strangerKey = Assistants.withKey(server, server.apiKey(strangers, 1000, "admin"));
    strangerOwner = Assistants.as(server, server.signedIn(strangers, "owner@b.example", "owner"));

    shared = adminKey.created("Front desk", "org_shared", null);
    membersOwn = member.created("Mine", "employee_personal", null);
    othersOwn = otherMember.created("Theirs", "employee_personal", null);
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  static final String TRACK = "{\"capabilities\":[\"track_orders\"]}";

  @Test
  void aPersonalAssistantBelongsToItsCreator() {
    JsonNode assistant =
        member.send(member.http.get("/api/assistants/" + membersOwn)).json().get("assistant");
    assertThat(assistant.get("ownerId").asText()).isEqualTo(memberId);
    assertThat(assistant.get("type").asText()).isEqualTo("employee_personal");
    assertThat(Assistants.ids(assistant.get("capabilities"))).containsExactly("answer_questions");
  }

  @Test
  void apiKeysWithoutAdminReadSharedAssistantsOnly() {
    assertThat(inferenceKey.capabilities(shared).status()).isEqualTo(200);
    assertThat(inferenceKey.available(shared).status()).isEqualTo(200);
    assertThat(inferenceKey.history(shared, "").status()).isEqualTo(200);
    assertForbidden(inferenceKey.patch(shared, TRACK));
    // A personal assistant is its owner's and the admins': for this key it does not exist.
    assertNotFound(inferenceKey.capabilities(membersOwn));
    assertNotFound(inferenceKey.patch(membersOwn, TRACK));
    List<String> listed = inferenceKey
        .send(inferenceKey.http.get("/api/assistants"))
        .json()
        .get("assistants")
        .valueStream()
        .map(assistant -> assistant.get("type").asText())
        .distinct()
        .toList();
    assertThat(listed).containsExactly("org_shared");
    assertForbidden(inferenceKey.create("Nope", "org_shared", null));
    assertForbidden(inferenceKey.send(inferenceKey.http.delete("/api/assistants/" + shared)));
    assertThat(adminKey.capabilities(membersOwn).status()).isEqualTo(200);
    assertThat(adminKey.patch(membersOwn, TRACK).status()).isEqualTo(200);
  }

  @Test
  void ownersAndAdminsModifyEveryAssistant() {
    for (Assistants manager : List.of(owner, admin)) {
      assertThat(manager.patch(shared, TRACK).status()).isEqualTo(200);
      assertThat(manager.patch(othersOwn, TRACK).status()).isEqualTo(200);
      assertThat(manager
              .send(manager.http.get("/api/assistants"))
              .json()
              .get("assistants")
              .size())
          .isGreaterThanOrEqualTo(3);
    }
    String forMember = admin.created("Assigned", "employee_personal", memberId);
    assertThat(member.capabilities(forMember).status()).isEqualTo(200);
  }

  @Test
  void aMemberReadsASharedAssistantButMayNotModifyIt() {
    assertThat(member.capabilities(shared).status()).isEqualTo(200);
    assertThat(member.available(shared).status()).isEqualTo(200);
    assertForbidden(member.patch(shared, TRACK));
    // The permission is checked before the body: a bad body from a member is still a 403.
    assertForbidden(member.patch(shared, "{\"capabilities\":\"nonsense\"}"));
    assertForbidden(member.send(member.http.delete("/api/assistants/" + shared)));
    assertForbidden(member.create("Team bot", "org_shared", null));
    assertForbidden(member.create("For someone else", "employee_personal", otherMemberId));
  }

  @Test
  void aMemberModifiesTheirOwnPersonalAssistantOnly() {
    assertThat(
            member.patch(membersOwn, "{\"capabilities\":[\"set_reminders\"]}").status())
        .isEqualTo(200);
    for (Http.Response response : List.of(
        member.capabilities(othersOwn),
        member.available(othersOwn),
        member.history(othersOwn, ""),
        member.patch(othersOwn, TRACK),
        member.send(member.http.get("/api/assistants/" + othersOwn)),
        member.send(member.http.delete("/api/assistants/" + othersOwn)))) {
      assertNotFound(response);
    }
    List<String> listed = member
        .send(member.http.get("/api/assistants"))
        .json()
        .get("assistants")
        .valueStream()
        .map(assistant -> assistant.get("_id").asText())
        .toList();
    assertThat(listed).contains(shared, membersOwn).doesNotContain(othersOwn);
  }

  @Test
  void anotherOrganizationsAssistantsDoNotExist() {
    for (Assistants stranger : List.of(strangerKey, strangerOwner)) {
      for (String id : List.of(shared, membersOwn)) {
        assertNotFound(stranger.capabilities(id));
        assertNotFound(stranger.available(id));
        assertNotFound(stranger.history(id, ""));
        assertNotFound(stranger.patch(id, TRACK));
        assertNotFound(stranger.send(stranger.http.get("/api/assistants/" + id)));
        assertNotFound(stranger.send(stranger.http.delete("/api/assistants/" + id)));
      }
      assertThat(stranger
              .send(stranger.http.get("/api/assistants"))
              .json()
              .get("assistants")
              .toString())
          .doesNotContain(shared, membersOwn);
    }
    // A personal assistant cannot be given to a user of another organization.
    Http.Response foreignOwner = strangerKey.create("Spy", "employee_personal", memberId);
    assertThat(foreignOwner.status()).isEqualTo(400);
    assertThat(foreignOwner.json().get("message").asText())
        .isEqualTo("No user '" + memberId + "' in this organization");
  }

  @Test
  void withoutCredentialsOrWithTheWrongOnes() {
    Http http = server.http;
    String path = "/api/assistants/" + shared + "/capabilities";
    for (Http.Response response : List.of(
        http.get(path).send(),
        http.patch(path).json(TRACK).send(),
        http.get("/api/capabilities/registry").send(),
        http.get(path).bearer("engk_not_a_real_key").send())) {
      assertThat(response.status()).isEqualTo(401);
      assertThat(response.json().get("success").asBoolean()).isFalse();
      assertThat(response.json().get("error").asText()).isEqualTo("Unauthorized");
    }
    String org = server.createOrganization("rise");
    String token = server.token(org, null, "memory:read");
    assertForbidden(http.get("/api/capabilities/registry").bearer(token).send());
  }

  @Test
  void aSessionMustSendItsCsrfTokenToChangeAnything() {
    TestServer.Session session =
        server.signedIn(server.createOrganization("rise"), "csrf@c.example", "owner");
    Assistants browser = Assistants.as(server, session);
    String mine = browser.created("Mine", "employee_personal", null);
    Http.Response withoutCsrf = server
        .http
        .patch("/api/assistants/" + mine + "/capabilities")
        .json(TRACK)
        .header("Cookie", "engram_session=" + session.cookie())
        .send();
    assertForbidden(withoutCsrf);
    assertThat(browser.capabilities(mine).json().get("version").asInt()).isEqualTo(1);
  }

  @Test
  void creatingAPersonalAssistantWithAnApiKeyNamesItsOwner() {
    Http.Response response = adminKey.create("Nobody's", "employee_personal", null);
    assertThat(response.status()).isEqualTo(400);
    assertThat(response.json().get("message").asText()).contains("'ownerId'");
    Http.Response sharedWithOwner = adminKey.create("Confused", "org_shared", memberId);
    assertThat(sharedWithOwner.status()).isEqualTo(400);
    Http.Response badType = adminKey.create("Odd", "organization_wide", null);
    assertThat(badType.status()).isEqualTo(400);
    assertThat(badType.json().get("message").asText()).contains("org_shared or employee_personal");
  }

  @Test
  void deletedAssistantsAreGoneForEveryone() {
    String doomed = member.created("Short-lived", "employee_personal", null);
    Http.Response deleted = member.send(member.http.delete("/api/assistants/" + doomed));
    assertThat(deleted.status()).isEqualTo(200);
    assertThat(deleted.json().get("success").asBoolean()).isTrue();
    assertNotFound(member.capabilities(doomed));
    assertNotFound(admin.patch(doomed, TRACK));
    assertNotFound(member.send(member.http.delete("/api/assistants/" + doomed)));
  }

  private static void assertForbidden(Http.Response response) {
    assertThat(response.status()).as(response.text()).isEqualTo(403);
    assertThat(response.json().get("success").asBoolean()).isFalse();
    assertThat(response.json().get("error").asText()).isEqualTo("Forbidden");
    assertThat(response.json().get("message").asText()).isNotBlank();
  }

  private static void assertNotFound(Http.Response response) {
    assertThat(response.status()).as(response.text()).isEqualTo(404);
    assertThat(response.json().get("success").asBoolean()).isFalse();
    assertThat(response.json().get("error").asText()).isEqualTo("Not found");
  }
}
