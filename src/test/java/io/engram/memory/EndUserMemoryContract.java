package io.engram.memory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.engram.platform.json.Json;
import io.engram.support.Http;
import io.engram.support.TestServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * End users, sessions, metadata filters and time through HTTP: a call for an end user reads that user's memories and the
 * shared ones and never another user's (by retrieval, list or id), a token bound to an end user is
 * that user without saying so and cannot act for another, and a session narrows a list and a
 * search. On SQLite and PostgreSQL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class EndUserMemoryContract {
  TestServer server;
  String org;
  String token;

  /** A server whose rate limit lets one test encode a few hundred memories. */
  abstract TestServer startServer();

  @BeforeAll
  void start() {
    server = startServer();
    org = server.createOrganization("growth");
    token =
        server.token(org, null, "memory:read", "memory:write", "memory:control", "memory:delete");
  }

  @AfterAll
  void stop() {
    server.close();
  }

  private Http.Response encode(String bearer, String body) {
    return server.http.post("/v1/memory").bearer(bearer).json(body).send();
  }

  private String encoded(String bearer, String body) {
    Http.Response response = encode(bearer, body);
    assertThat(response.status()).as(response.text()).isEqualTo(201);
    return response.json().get("id").asText();
  }

  private List<String> retrieved(Http.Call call) {
    Http.Response response = call.send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    response.json().get("memories").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  private Http.Call retrieve(String bearer, String body) {
    return server.http.post("/v1/memory/retrieve").bearer(bearer).json(body);
  }

  private List<String> listed(String bearer, String query) {
    Http.Response response =
        server.http.get("/v1/memory?" + query).bearer(bearer).send();
    assertThat(response.status()).as(response.text()).isEqualTo(200);
    List<String> ids = new ArrayList<>();
    response.json().get("data").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  @Test
  void aCallForAnEndUserSeesTheirMemoriesAndTheSharedOnesNeverAnotherUsers() {
    String shared = encoded(token, "{\"text\":\"The Lisbon office closes at six on Fridays.\"}");
    String ada = encoded(
        token, "{\"text\":\"Ada works late at the Lisbon office on Fridays.\",\"userId\":\"ada\"}");
    Http.Response byHeader = server
        .http
        .post("/v1/memory")
        .bearer(token)
        .header("X-Engram-User", "bob")
        .json("{\"text\":\"Bob never goes to the Lisbon office on Fridays.\"}")
        .send();
    assertThat(byHeader.status()).as(byHeader.text()).isEqualTo(201);
    assertThat(byHeader.json().get("userId").asText()).isEqualTo("bob");
    String bob = byHeader.json().get("id").asText();

    String question = "{\"query\":\"Lisbon office on Fridays\",\"limit\":10";
    assertThat(retrieved(retrieve(token, question + ",\"userId\":\"ada\"}")))
        .contains(shared, ada)
        .doesNotContain(bob);
    assertThat(retrieved(retrieve(token, question + "}").header("X-Engram-User", "bob")))
        .contains(shared, bob)
        .doesNotContain(ada);
    assertThat(retrieved(retrieve(token, question + "}")))
        .contains(shared)
        .doesNotContain(ada, bob);

    // A list is the boundary's own memories: the user's alone, or the shared ones.
    assertThat(listed(token, "userId=ada")).contains(ada).doesNotContain(shared, bob);
    assertThat(listed(token, "")).contains(shared).doesNotContain(ada, bob);

    // Another user's id is not there at all: 404 to read, change or delete, and it stays.
    for (Http.Call call : List.of(
        server.http.get("/v1/memory/" + bob + "?userId=ada").bearer(token),
        server.http.get("/v1/memory/" + bob).bearer(token),
        server.http.delete("/v1/memory/" + bob + "?userId=ada").bearer(token),
        server
            .http
            .post("/v1/memory/" + bob + "/suppress")
            .bearer(token)
            .header("X-Engram-User", "ada"),
        server
            .http
            .patch("/v1/memory/" + bob + "?userId=ada")
            .bearer(token)
            .body("application/merge-patch+json", "{\"text\":\"Rewritten\"}"))) {
      Http.Response response = call.send();
      assertThat(response.status()).as(response.text()).isEqualTo(404);
      assertThat(response.json().at("/error/code").asText()).isNotEmpty();
    }
    Http.Response bobsOwn =
        server.http.get("/v1/memory/" + bob + "?userId=bob").bearer(token).send();
    assertThat(bobsOwn.status()).as(bobsOwn.text()).isEqualTo(200);
    assertThat(bobsOwn.json().get("state").asText()).isEqualTo("durable");
    assertThat(bobsOwn.json().get("text").asText()).startsWith("Bob never");
  }

  @Test
  void theSameTextForTwoUsersIsTwoMemoriesAndTheSameUserTwiceIsOne() {
    String body = "{\"text\":\"My favourite colour is teal.\",\"userId\":\"%s\"}";
    String ada = encoded(token, body.formatted("ada-colour"));
    String bob = encoded(token, body.formatted("bob-colour"));
    assertThat(bob).isNotEqualTo(ada);
    Http.Response again = encode(token, body.formatted("ada-colour"));
    assertThat(again.status()).as(again.text()).isEqualTo(200);
    assertThat(again.json().get("id").asText()).isEqualTo(ada);
    assertThat(again.json().get("deduplicated").asBoolean()).isTrue();
  }

  @Test
  void aTokenBoundToAnEndUserIsThatUserAndCannotActForAnother() {
    Http.Response issued = server
        .operator()
        .send(server
            .http
            .post("/v1/organizations/" + org + "/tokens")
            .json("{\"name\":\"carol's app\",\"scopes\":[\"memory:read\",\"memory:write\","
                + "\"insights:read\"],\"end_user_id\":\"carol@example.com\"}"));
    assertThat(issued.status()).as(issued.text()).isEqualTo(201);
    assertThat(issued.json().get("end_user_id").asText()).isEqualTo("carol@example.com");
    String carol = issued.json().get("token").asText();

    Http.Response written =
        encode(carol, "{\"text\":\"Carol's invoices go to the Porto office.\"}");
    assertThat(written.status()).as(written.text()).isEqualTo(201);
    assertThat(written.json().get("userId").asText()).isEqualTo("carol@example.com");
    String carols = written.json().get("id").asText();
    String danas = encoded(
        token, "{\"text\":\"Dana's invoices go to the Porto office.\",\"userId\":\"dana\"}");

    assertThat(retrieved(retrieve(carol, "{\"query\":\"invoices Porto office\"}")))
        .contains(carols)
        .doesNotContain(danas);
    assertThat(server.http.get("/v1/memory/" + danas).bearer(carol).send().status())
        .isEqualTo(404);
    for (Http.Call call : List.of(
        retrieve(carol, "{\"query\":\"invoices\",\"userId\":\"dana\"}"),
        server.http.get("/v1/memory?userId=dana").bearer(carol),
        server
            .http
            .post("/v1/memory")
            .bearer(carol)
            .header("X-Engram-User", "dana")
            .json("{\"text\":\"Not Carol's to write.\"}"))) {
      Http.Response refused = call.send();
      assertThat(refused.status()).as(refused.text()).isEqualTo(403);
      assertThat(refused.json().at("/error/code").asText()).isEqualTo("user_not_allowed");
    }
    // Routes that span every end user are not for it.
    Http.Response orgWide =
        server.http.get("/api/memory/reflection/settings").bearer(carol).send();
    assertThat(orgWide.status()).as(orgWide.text()).isEqualTo(403);
    assertThat(orgWide.json().get("message").asText()).contains("end user");
    Http.Response usage =
        server.http.get("/v1/organizations/" + org + "/usage").bearer(carol).send();
    assertThat(usage.status()).as(usage.text()).isEqualTo(403);
    assertThat(usage.json().at("/error/code").asText()).isEqualTo("user_bound_token");
    // Naming itself is fine.
    assertThat(
            retrieved(retrieve(carol, "{\"query\":\"invoices\",\"userId\":\"carol@example.com\"}")))
        .contains(carols);
  }

  @Test
  void aSessionNarrowsAListAndASearchAndIsShownOnTheMemory() {
    String first = encoded(
        token,
        "{\"text\":\"We picked the blue tiles for the kitchen.\",\"userId\":\"erin\","
            + "\"sessionId\":\"thread-1\"}");
    String second = encoded(
        token,
        "{\"text\":\"We picked the green tiles for the bathroom.\",\"userId\":\"erin\","
            + "\"sessionId\":\"thread-2\"}");
    Http.Response shown =
        server.http.get("/v1/memory/" + first + "?userId=erin").bearer(token).send();
    assertThat(shown.json().get("sessionId").asText()).isEqualTo("thread-1");

    assertThat(listed(token, "userId=erin&sessionId=thread-1")).containsExactly(first);
    assertThat(listed(token, "userId=erin")).contains(first, second);
    assertThat(
            retrieved(
                retrieve(
                    token,
                    "{\"query\":\"which tiles did we pick\",\"userId\":\"erin\",\"sessionId\":\"thread-2\"}")))
        .containsExactly(second);

    Http.Response event = server
        .http
        .post("/v1/memory/events")
        .bearer(token)
        .json("{\"type\":\"order.placed\",\"source\":\"shop\",\"text\":\"Erin ordered 40 tiles.\","
            + "\"userId\":\"erin\",\"sessionId\":\"thread-2\"}")
        .send();
    assertThat(event.status()).as(event.text()).isEqualTo(201);
    assertThat(event.json().at("/event/userId").asText()).isEqualTo("erin");
    assertThat(event.json().at("/event/sessionId").asText()).isEqualTo("thread-2");
    event.json().get("candidates").forEach(c -> {
      assertThat(c.get("userId").asText()).isEqualTo("erin");
      assertThat(c.get("sessionId").asText()).isEqualTo("thread-2");
    });
  }

  @Test
  void aSelectiveMetadataFilterStillReturnsLimitResultsFromInsideTheIndex() {
    // 240 memories about one thing; 12 of them are the legal team's. Unfiltered, the top 10 are
    // anyone's; filtered, all 10 are legal's: the filter runs in the search, not after its top k.
    List<String> legal = new ArrayList<>();
    for (int i = 0; i < 240; i++) {
      boolean isLegal = i % 20 == 7;
      String team = isLegal ? "legal" : (i % 2 == 0 ? "sales" : "support");
      String id = encoded(
          token,
          Json.write(Map.of(
              "text",
              "Contract renewal note " + i + " for the Porto customer account.",
              "userId",
              "filters",
              "metadata",
              Map.of(
                  "team",
                  team,
                  "priority",
                  i % 5,
                  "dueAt",
                  "2031-01-%02dT09:00:00Z".formatted(1 + i % 28),
                  "tags",
                  List.of("renewal", isLegal ? "review" : "routine")))));
      if (isLegal) {
        legal.add(id);
      }
    }
    String ask =
        "{\"query\":\"contract renewal Porto customer\",\"limit\":10,\"userId\":\"filters\"";
    List<String> unfiltered = retrieved(retrieve(token, ask + "}"));
    assertThat(unfiltered).hasSize(10);
    assertThat(unfiltered.stream().filter(legal::contains).count())
        .as("unfiltered, the top 10 are mostly not legal's")
        .isLessThan(10);

    List<String> filtered = retrieved(retrieve(token, ask + ",\"filters\":{\"team\":\"legal\"}}"));
    assertThat(filtered).hasSize(10);
    assertThat(legal).containsAll(filtered);
    assertThat(retrieved(retrieve(
            token,
            ask + ",\"filters\":{\"tags\":{\"in\":[\"review\"]},\"priority\":{\"gte\":2}}}")))
        .isNotEmpty()
        .allSatisfy(id -> assertThat(legal).contains(id));
    assertThat(
            retrieved(
                retrieve(
                    token,
                    ask
                        + ",\"filters\":{\"team\":\"legal\",\"dueAt\":{\"lt\":\"2031-01-01T09:00:01Z\"}}}")))
        .isEmpty();

    // A list filters the same way, page by page.
    String query = "userId=filters&limit=5&filters="
        + java.net.URLEncoder.encode(
            "{\"team\":{\"in\":[\"legal\"]}}", java.nio.charset.StandardCharsets.UTF_8);
    Http.Response page = server.http.get("/v1/memory?" + query).bearer(token).send();
    assertThat(page.status()).as(page.text()).isEqualTo(200);
    List<String> listed = new ArrayList<>();
    page.json().get("data").forEach(m -> listed.add(m.get("id").asText()));
    String next = page.json().get("nextBefore").asText();
    Http.Response second =
        server.http.get("/v1/memory?" + query + "&before=" + next).bearer(token).send();
    second.json().get("data").forEach(m -> listed.add(m.get("id").asText()));
    assertThat(listed).hasSize(10).allSatisfy(id -> assertThat(legal).contains(id));

    for (String[] bad : new String[][] {
      {"{\"team\":{\"like\":\"le%\"}}", "filters.team.like"},
      {"{\"priority\":{\"gte\":\"high\"}}", "filters.priority.gte"},
      {"[\"team\"]", "filters"}
    }) {
      Http.Response refused =
          retrieve(token, ask + ",\"filters\":" + bad[0] + "}").send();
      assertThat(refused.status()).as(refused.text()).isEqualTo(400);
      assertThat(refused.json().at("/error/param").asText()).isEqualTo(bad[1]);
    }
    Http.Response badList =
        server.http.get("/v1/memory?filters=%7Bteam").bearer(token).send();
    assertThat(badList.status()).as(badList.text()).isEqualTo(400);
  }

  @Test
  void askedAsOfEachDateTheAnswerIsThatDatesFact() {
    // Ada's role changes three times; each replacement closes the one before at its own start.
    String engineer = encoded(
        token,
        "{\"text\":\"Ada's role is staff engineer.\",\"subject\":\"Ada\",\"userId\":\"hr\","
            + "\"validFrom\":\"2029-01-01T00:00:00Z\"}");
    String manager = encoded(
        token,
        "{\"text\":\"Ada's role is engineering manager.\",\"subject\":\"Ada\",\"userId\":\"hr\","
            + "\"validFrom\":\"2029-03-01T00:00:00Z\",\"supersedes\":\"" + engineer + "\"}");
    String director = encoded(
        token,
        "{\"text\":\"Ada's role is director of engineering.\",\"subject\":\"Ada\","
            + "\"userId\":\"hr\",\"validFrom\":\"2029-06-01T00:00:00Z\",\"supersedes\":\""
            + manager + "\"}");
    Http.Response closed =
        server.http.get("/v1/memory/" + engineer + "?userId=hr").bearer(token).send();
    assertThat(closed.json().get("validUntil").asText()).isEqualTo("2029-03-01T00:00:00Z");
    assertThat(closed.json().get("state").asText()).isEqualTo("durable");

    String ask = "{\"query\":\"What is Ada's role?\",\"userId\":\"hr\"";
    for (String[] dated : new String[][] {
      {"2029-02-10T00:00:00Z", engineer},
      {"2029-03-01T00:00:00Z", manager},
      {"2029-05-31T23:59:59Z", manager},
      {"2029-09-01T00:00:00Z", director}
    }) {
      List<String> found = retrieved(retrieve(token, ask + ",\"asOf\":\"" + dated[0] + "\"}"));
      assertThat(found).as("as of " + dated[0]).containsExactly(dated[1]);
    }
    assertThat(retrieved(retrieve(token, ask + "}"))).as("now").containsExactly(director);
    assertThat(retrieved(retrieve(token, ask + ",\"asOf\":\"2028-12-31T00:00:00Z\"}")))
        .as("before any of it")
        .isEmpty();
  }

  @Test
  void anExpiredMemoryIsNeverRetrievedAndHousekeepingTombstonesIt() {
    java.time.Instant now = server.clock.instant();
    String shortLived = encoded(
        token,
        Json.write(Map.of(
            "text", "The lobby door code this week is 4471.",
            "userId", "expiry",
            "expiresAt", now.plusSeconds(3600).toString())));
    String ask = "{\"query\":\"lobby door code\",\"userId\":\"expiry\"}";
    assertThat(retrieved(retrieve(token, ask))).containsExactly(shortLived);

    server.clock.advance(java.time.Duration.ofSeconds(3601));
    assertThat(retrieved(retrieve(token, ask))).as("expired, not yet swept").isEmpty();
    assertThat(housekeeping()).isPositive();
    Http.Response swept = server
        .http
        .get("/v1/memory/" + shortLived + "/provenance?userId=expiry")
        .bearer(token)
        .send();
    assertThat(swept.status()).as(swept.text()).isEqualTo(200);
    assertThat(swept.text()).contains("expired at");
    Http.Response memory = server
        .http
        .get("/v1/memory/" + shortLived + "?userId=expiry")
        .bearer(token)
        .send();
    assertThat(memory.json().get("state").asText()).isEqualTo("tombstoned");
  }

  @Test
  void anOrganizationsDefaultTimeToLivePerKindExpiresWhatItsEncodesDoNotDate() {
    String owner = server.createOrganization("growth");
    String adminKey = server.apiKey(owner, 1000, "admin");
    String ownToken = server.token(owner, null, "memory:read", "memory:write");
    for (String[] bad : new String[][] {
      {"{\"ttlByKind\":{\"rumour\":3600}}", "ttlByKind.rumour"},
      {"{\"ttlByKind\":{\"observation\":5}}", "ttlByKind.observation"},
      {"{\"ttlByKind\":{\"observation\":\"a day\"}}", "ttlByKind.observation"},
      {"{\"ttlByKind\":{\"observation\":1.5}}", "ttlByKind.observation"}
    }) {
      Http.Response refused = server
          .http
          .patch("/api/memory/settings")
          .bearer(adminKey)
          .json(bad[0])
          .send();
      assertThat(refused.status()).as(refused.text()).isEqualTo(400);
      assertThat(refused.json().get("field").asText()).isEqualTo(bad[1]);
    }
    Http.Response set = server
        .http
        .patch("/api/memory/settings")
        .bearer(adminKey)
        .json("{\"ttlByKind\":{\"observation\":86400}}")
        .send();
    assertThat(set.status()).as(set.text()).isEqualTo(200);
    assertThat(set.json().at("/settings/ttlByKind/observation").asLong()).isEqualTo(86_400);

    java.time.Instant now = server.clock.instant();
    Http.Response observed = encode(
        ownToken,
        "{\"text\":\"The printer on floor two jams often.\",\"memoryKind\":\"observation\"}");
    assertThat(observed.json().get("expiresAt").asText())
        .isEqualTo(now.plusSeconds(86_400).toString());
    Http.Response fact =
        encode(ownToken, "{\"text\":\"The printer on floor two is a laser printer.\"}");
    assertThat(fact.json().get("expiresAt").isNull()).isTrue();
    String own = "2099-01-01T00:00:00Z";
    Http.Response dated = encode(
        ownToken,
        "{\"text\":\"The printer on floor three is new.\",\"memoryKind\":\"observation\","
            + "\"expiresAt\":\"" + own + "\"}");
    assertThat(dated.json().get("expiresAt").asText()).isEqualTo(own);
  }

  @Test
  void badTimesAreClearErrorsAndHalfAReplacementIsNothing() {
    java.time.Instant now = server.clock.instant();
    String kept =
        encoded(token, "{\"text\":\"The Oslo depot opens at seven.\",\"userId\":\"times\"}");
    long before = memoryCount();
    for (String[] bad : new String[][] {
      {"{\"text\":\"x\",\"expiresAt\":\"" + now.minusSeconds(1) + "\"}", "expiresAt"},
      {
        "{\"text\":\"x\",\"validFrom\":\"2029-05-01T00:00:00Z\",\"validUntil\":\"2029-04-01T00:00:00Z\"}",
        "validUntil"
      },
      {
        "{\"text\":\"x\",\"validFrom\":\"2029-05-01T00:00:00Z\",\"validUntil\":\"2029-05-01T00:00:00Z\"}",
        "validUntil"
      },
      {"{\"text\":\"x\",\"supersedes\":\"not an id\"}", "supersedes"},
      {"{\"text\":\"x\",\"validFrom\":\"yesterday\"}", "validFrom"}
    }) {
      Http.Response response = encode(token, bad[0]);
      assertThat(response.status()).as(bad[0] + " " + response.text()).isEqualTo(400);
      assertThat(response.json().at("/error/param").asText()).isEqualTo(bad[1]);
    }
    // Superseding another user's memory, or one that is not there: 404, and nothing is written.
    for (String body : List.of(
        "{\"text\":\"The Oslo depot opens at eight.\",\"userId\":\"someone-else\",\"supersedes\":\""
            + kept + "\"}",
        "{\"text\":\"The Oslo depot opens at eight.\",\"userId\":\"times\",\"supersedes\":\"mem_00000000000000000000000000\"}")) {
      Http.Response response = encode(token, body);
      assertThat(response.status()).as(response.text()).isEqualTo(404);
    }
    assertThat(memoryCount()).isEqualTo(before);
    Http.Response untouched =
        server.http.get("/v1/memory/" + kept + "?userId=times").bearer(token).send();
    assertThat(untouched.json().get("validUntil").isNull()).isTrue();
    Http.Response future = retrieve(
            token, "{\"query\":\"depot\",\"asOf\":\"" + now.plusSeconds(86_400) + "\"}")
        .send();
    assertThat(future.status()).as(future.text()).isEqualTo(400);
    assertThat(future.json().at("/error/param").asText()).isEqualTo("asOf");
  }

  private int housekeeping() {
    return server.engram.memory().housekeeping().tombstoneExpired(200);
  }

  @Test
  void badUserAndSessionIdsAreClearErrorsAndStoreNothing() {
    Random random = new Random(45);
    List<String> bad = new ArrayList<>(List.of("\u0000", "a\nb", "x".repeat(257)));
    for (int i = 0; i < 20; i++) {
      StringBuilder id = new StringBuilder("u");
      id.append((char) random.nextInt(0x20)); // a control character somewhere
      id.append("z".repeat(random.nextInt(10)));
      bad.add(id.toString());
    }
    long before = memoryCount();
    for (String id : bad) {
      for (String field : List.of("userId", "sessionId")) {
        Http.Response response =
            encode(token, Json.write(Map.of("text", "A memory with a bad " + field, field, id)));
        assertThat(response.status()).as(field + " " + response.text()).isEqualTo(400);
        assertThat(response.json().at("/error/param").asText()).isEqualTo(field);
      }
    }
    for (String body : List.of(
        "{\"text\":\"x\",\"userId\":12}",
        "{\"text\":\"x\",\"userId\":null}",
        "{\"text\":\"x\",\"sessionId\":[\"a\"]}",
        "{\"text\":\"x\",\"userId\":\"\"}")) {
      Http.Response response = encode(token, body);
      assertThat(response.status()).as(body + " " + response.text()).isEqualTo(400);
    }
    Http.Response disagreeing = server
        .http
        .post("/v1/memory?userId=ada")
        .bearer(token)
        .json("{\"text\":\"Whose is this?\",\"userId\":\"bob\"}")
        .send();
    assertThat(disagreeing.status()).as(disagreeing.text()).isEqualTo(400);
    assertThat(memoryCount()).isEqualTo(before);

    Http.Response badToken = server
        .operator()
        .send(server
            .http
            .post("/v1/organizations/" + org + "/tokens")
            .json("{\"name\":\"t\",\"scopes\":[\"memory:read\"],\"end_user_id\":\"a\\u0001b\"}"));
    assertThat(badToken.status()).as(badToken.text()).isEqualTo(400);
    assertThat(badToken.json().at("/error/param").asText()).isEqualTo("end_user_id");
    JsonNode listedQuery =
        server.http.get("/v1/memory?sessionId=%01").bearer(token).send().json();
    assertThat(listedQuery.at("/error/param").asText()).isEqualTo("sessionId");
  }

  private long memoryCount() {
    return server
        .engram
        .services()
        .database()
        .read(h -> h.createQuery("SELECT COUNT(*) FROM memories WHERE org_id = :org")
            .bind("org", org)
            .mapTo(Long.class)
            .one());
  }
}
